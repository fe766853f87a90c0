import type { Worker } from 'node:cluster';
import { dispatch, isGatewayMessage, tagged, type Handlers, type PrimaryMessage, type WorkerMessage } from './protocol.ts';

/** The primary's side of the channels: dispatches each worker's messages by type, and sends to the workers. */
export class WorkerHub {
  private readonly handlers: Handlers<WorkerMessage, [workerId: number]> = {};
  private readonly workers = new Map<number, Worker>();

  on<K extends WorkerMessage['type']>(type: K, handler: Handlers<WorkerMessage, [workerId: number]>[K]): void {
    this.handlers[type] = handler;
  }

  attach(worker: Worker): void {
    this.workers.set(worker.id, worker);
    worker.on('message', (message: unknown) => {
      if (isGatewayMessage<WorkerMessage>(message)) dispatch(this.handlers, message, worker.id);
    });
    worker.once('exit', () => this.workers.delete(worker.id));
  }

  send(workerId: number, message: PrimaryMessage): boolean {
    const worker = this.workers.get(workerId);
    if (worker === undefined || !worker.isConnected()) return false;
    worker.send(tagged(message), ignoreClosed);
    return true;
  }

  /** Sends to every live worker but `except`; returns the ids it was sent to. */
  broadcast(message: PrimaryMessage, except?: number): number[] {
    return [...this.workers.keys()].filter((id) => id !== except && this.send(id, message));
  }
}

/**
 * A worker that is exiting may close its channel between the check and the write: with a
 * callback the failure (EPIPE) comes here instead of an 'error' event that would end the primary.
 */
function ignoreClosed(): void {}
