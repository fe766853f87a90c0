import cluster from 'node:cluster';
import { channelTag, isGatewayMessage, type Call, type CallBatch, type PrimaryMessage } from './protocol.ts';

type EventHandler = (data: unknown) => void | Promise<void>;

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/**
 * A worker's channel to the cluster primary: `call` resolves with the primary's answer,
 * `notify` expects none. Calls made within one event-loop turn leave as one IPC message
 * (flushed by `setImmediate`, after the poll phase that parsed the requests asking them).
 */
export class PrimaryLink {
  readonly workerId: number;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private queue: Call[] = [];
  private flushScheduled = false;
  private closed = false;
  private readonly handlers = new Map<string, EventHandler>();

  constructor() {
    this.workerId = cluster.worker?.id ?? 0;
    process.on('message', (message: unknown) => this.receive(message));
    process.once('disconnect', () => this.close(new Error('the cluster primary is gone')));
  }

  /**
   * Asks the primary. `now` sends at once (with whatever is queued, keeping the order): for
   * slot releases, which must reach the primary before the client, answered, asks again.
   */
  call(op: string, args: unknown, now = false): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the cluster primary is gone'));
    const id = this.nextId++;
    const answer = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.enqueue({ id, op, args });
    if (now) this.flush();
    return answer;
  }

  notify(op: string, args: unknown): void {
    if (!this.closed) this.enqueue({ id: 0, op, args });
  }

  /** Runs `handler` for each event of that name the primary sends. */
  on(event: string, handler: EventHandler): void {
    this.handlers.set(event, handler);
  }

  private enqueue(call: Call): void {
    this.queue.push(call);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const calls = this.queue;
    this.queue = [];
    if (calls.length === 0 || this.closed) return;
    const batch: CallBatch = { tag: channelTag, calls };
    // The callback takes a failed write (the primary is gone: 'disconnect' ends the calls) instead of an 'error' event.
    process.send?.(batch, undefined, {}, () => undefined);
  }

  private receive(message: unknown): void {
    if (!isGatewayMessage(message)) return;
    const { replies, event, data } = message as PrimaryMessage;
    for (const reply of replies ?? []) {
      const waiting = this.pending.get(reply.id);
      if (waiting === undefined) continue;
      this.pending.delete(reply.id);
      if (reply.ok) waiting.resolve(reply.value);
      else waiting.reject(new Error(String(reply.value)));
    }
    if (event !== undefined) void this.handlers.get(event)?.(data);
  }

  private close(error: Error): void {
    this.closed = true;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}
