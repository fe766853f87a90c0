import type { Worker } from 'node:cluster';
import { channelTag, isGatewayMessage, type CallBatch, type PrimaryMessage, type Reply } from './protocol.ts';

/** Answers one call; a promise is answered when it settles (in a message of its own). */
export type CallHandler = (workerId: number, args: unknown) => unknown;

/**
 * The primary's side of the channel: dispatches each worker's batched calls to the handlers
 * registered by name, answers synchronous ones in one message per batch, and sends events.
 */
export class WorkerHub {
  private readonly handlers = new Map<string, CallHandler>();
  private readonly workers = new Map<number, Worker>();

  constructor() {
    // Asked by a worker whose posts wait for an answer that proves them applied (primary-link.ts).
    this.handlers.set('ping', () => null);
  }

  handle(op: string, handler: CallHandler): void {
    this.handlers.set(op, handler);
  }

  attach(worker: Worker): void {
    this.workers.set(worker.id, worker);
    worker.on('message', (message: unknown) => this.receive(worker, message));
    worker.once('exit', () => this.workers.delete(worker.id));
  }

  /** Sends an event to every live worker but `except`; returns the ids it was sent to. */
  broadcast(event: string, data: unknown, except?: number): number[] {
    const sent: number[] = [];
    for (const [id, worker] of this.workers) {
      if (id === except || !worker.isConnected()) continue;
      const message: PrimaryMessage = { tag: channelTag, event, data };
      worker.send(message, ignoreClosed);
      sent.push(id);
    }
    return sent;
  }

  private receive(worker: Worker, message: unknown): void {
    if (!isGatewayMessage(message)) return;
    const replies: Reply[] = [];
    for (const call of (message as CallBatch).calls) {
      let value: unknown;
      try {
        const handler = this.handlers.get(call.op);
        if (handler === undefined) throw new Error(`unknown cluster operation ${call.op}`);
        value = handler(worker.id, call.args);
      } catch (error) {
        if (call.id !== 0) replies.push({ id: call.id, ok: false, value: errorText(error) });
        continue;
      }
      // A post (negative id) is answered only if it fails; a notification (0) never.
      if (value instanceof Promise) this.settle(worker, call.id, value);
      else if (call.id > 0) replies.push({ id: call.id, ok: true, value: value ?? null });
    }
    if (replies.length > 0) this.reply(worker, replies);
  }

  private settle(worker: Worker, id: number, value: Promise<unknown>): void {
    value.then(
      (result: unknown) => {
        if (id > 0) this.reply(worker, [{ id, ok: true, value: result }]);
      },
      (error: unknown) => {
        if (id !== 0) this.reply(worker, [{ id, ok: false, value: errorText(error) }]);
      },
    );
  }

  private reply(worker: Worker, replies: Reply[]): void {
    if (!worker.isConnected()) return;
    const message: PrimaryMessage = { tag: channelTag, replies };
    worker.send(message, ignoreClosed);
  }
}

/**
 * A worker that is exiting may close its channel between the check and the write: with a
 * callback the failure (EPIPE) comes here instead of an 'error' event that would end the primary.
 */
function ignoreClosed(): void {}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
