import cluster from 'node:cluster';
import { channelTag, isGatewayMessage, type Call, type CallBatch, type PrimaryMessage } from './protocol.ts';

type EventHandler = (data: unknown) => void | Promise<void>;

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** A posted operation waiting for proof that the primary applied it. */
interface Posted extends Pending {
  readonly id: number;
}

/**
 * How long a post waits for a later call's answer (its proof of application) before a ping
 * asks for one. Under load the next admission's answer comes first; the ping is for idle.
 */
const postAckDelayMs = 10;

/**
 * A worker's channel to the cluster primary: `call` resolves with the primary's answer,
 * `post` once the primary has applied it (no answer of its own), `notify` expects none. Calls made within one event-loop turn leave as one IPC message
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
  /** Posts not yet proven applied, in the order sent (ids increasing). */
  private posted: Posted[] = [];
  private ackTimer: NodeJS.Timeout | null = null;

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

  /**
   * Sends `op` with no answer of its own (one IPC message less per call in each direction):
   * it resolves once the primary has applied it. The channel keeps order and the primary
   * applies calls in order, so the answer to any call sent later proves it; when none comes
   * within `postAckDelayMs`, a ping asks for one. The primary answers a post only if it fails.
   */
  post(op: string, args: unknown, now = false): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the cluster primary is gone'));
    const id = this.nextId++;
    const applied = new Promise<void>((resolve, reject) => this.posted.push({ id, resolve: () => resolve(), reject }));
    this.enqueue({ id: -id, op, args });
    if (now) this.flush();
    this.ackTimer ??= setTimeout(() => this.ping(), postAckDelayMs);
    return applied;
  }

  notify(op: string, args: unknown, now = false): void {
    if (this.closed) return;
    this.enqueue({ id: 0, op, args });
    if (now) this.flush();
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
      this.applied(Math.abs(reply.id));
      const waiting = reply.id > 0 ? this.pending.get(reply.id) : this.takePosted(-reply.id);
      if (waiting === undefined) continue;
      this.pending.delete(reply.id);
      if (reply.ok) waiting.resolve(reply.value);
      else waiting.reject(new Error(String(reply.value)));
    }
    if (event !== undefined) void this.handlers.get(event)?.(data);
  }

  /** The primary has applied every message before `id`: the posts among them are done. */
  private applied(id: number): void {
    let done = 0;
    while (done < this.posted.length && (this.posted[done] as Posted).id < id) done += 1;
    if (done === 0) return;
    for (const post of this.posted.splice(0, done)) post.resolve(undefined);
  }

  private takePosted(id: number): Posted | undefined {
    const index = this.posted.findIndex((post) => post.id === id);
    return index < 0 ? undefined : this.posted.splice(index, 1)[0];
  }

  /** Asks for an answer that proves the waiting posts applied, unless a call sent after them will bring one. */
  private ping(): void {
    this.ackTimer = null;
    const last = this.posted.at(-1);
    if (last === undefined || this.closed) return;
    for (const id of this.pending.keys()) if (id > last.id) return;
    void this.call('ping', null).catch(() => undefined);
  }

  private close(error: Error): void {
    this.closed = true;
    if (this.ackTimer !== null) clearTimeout(this.ackTimer);
    for (const waiting of [...this.pending.values(), ...this.posted.splice(0)]) waiting.reject(error);
    this.pending.clear();
  }
}
