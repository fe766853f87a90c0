import type { Logger } from 'pino';
import { everyInterval } from './shared-interval.ts';

export interface BatchSettings {
  flushIntervalMs: number;
  batchSize: number;
  /** Items kept in memory while the database is down; beyond it new items are dropped (logged). */
  maxBuffered?: number;
  logger: Logger;
}

export interface BatchWriterOptions<T> extends BatchSettings {
  /** Writes one batch (one transaction), in order. */
  write(batch: T[]): Promise<void>;
  /** The request id of an item, logged when it is dropped. */
  requestIdOf(item: T): string;
  /** For log messages, e.g. `usage` `record` `records`. */
  names: { readonly table: string; readonly item: string; readonly items: string };
}

const defaultMaxBuffered = 100_000;

/**
 * Writes off the request path (usage records, request log entries): `enqueue` only queues; a
 * timer writes batches in one transaction each (never one write per request), in order,
 * retrying after a failure; `stop` flushes what is left. The queue is bounded.
 */
export class BatchWriter<T> {
  private readonly writer: BatchWriterOptions<T>;
  private buffer: T[] = [];
  /** The batch being written. */
  private inFlight: T[] = [];
  /** Set while started: removes this writer's tick. */
  private stopTicking: (() => void) | null = null;
  private flushing: Promise<void> | null = null;
  private failing = false;

  constructor(options: BatchWriterOptions<T>) {
    this.writer = options;
  }

  start(): void {
    // One timer for every writer of the same interval: their batches travel together (ADR 23).
    this.stopTicking = everyInterval(this.writer.flushIntervalMs, () => void this.flush());
  }

  get pending(): number {
    return this.buffer.length + this.inFlight.length;
  }

  /** Writes everything queued so far; concurrent callers share the running flush. */
  async flush(): Promise<void> {
    while (this.flushing !== null) await this.flushing;
    if (this.buffer.length === 0) return;
    this.flushing = this.writeAll().finally(() => {
      this.flushing = null;
      // A batch that filled up during the write goes at once, as a batch filled while idle
      // does (not after a failure: the timer paces the retries).
      if (this.stopTicking !== null && !this.failing && this.buffer.length >= this.writer.batchSize) void this.flush();
    });
    await this.flushing;
  }

  /** Stops the timer and writes what is left, retrying a few times. */
  async stop(): Promise<void> {
    this.stopTicking?.();
    this.stopTicking = null;
    for (let attempt = 0; attempt < 5 && this.pending > 0; attempt += 1) {
      await this.flush();
      if (this.buffer.length > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const { logger, names } = this.writer;
    if (this.pending > 0) logger.error({ lost: this.pending }, `${names.table} ${names.items} could not be written before exit`);
  }

  /** Queues an item; false when the queue is full (the item is dropped and logged). */
  protected enqueue(item: T): boolean {
    const { logger, names } = this.writer;
    if (this.buffer.length >= (this.writer.maxBuffered ?? defaultMaxBuffered)) {
      logger.error({ request_id: this.writer.requestIdOf(item) }, `${names.table} buffer full: ${names.item} dropped`);
      return false;
    }
    this.buffer.push(item);
    if (this.buffer.length >= this.writer.batchSize && this.flushing === null) void this.flush();
    return true;
  }

  /** The oldest item not written yet (being written, or queued). */
  protected oldest(): T | undefined {
    return this.inFlight[0] ?? this.buffer[0];
  }

  /** Runs `read` while no batch is being written and none starts. */
  protected async whileIdle<R>(read: () => Promise<R>): Promise<R> {
    while (this.flushing !== null) await this.flushing;
    let done: () => void = () => undefined;
    this.flushing = new Promise<void>((resolve) => {
      done = resolve;
    });
    try {
      return await read();
    } finally {
      this.flushing = null;
      done();
    }
  }

  /**
   * Writes what was queued when the flush began. Items queued meanwhile wait for the next tick
   * or a full batch: writing them at once made batches of a few dozen rows under load, each a
   * commit and a round trip to the writer thread (ADR 23).
   */
  private async writeAll(): Promise<void> {
    const { logger, names } = this.writer;
    let queued = this.buffer.length;
    while (queued > 0 && this.buffer.length > 0) {
      this.inFlight = this.buffer.splice(0, Math.min(this.writer.batchSize, queued));
      queued -= this.inFlight.length;
      try {
        await this.writer.write(this.inFlight);
        if (this.failing) logger.info(`${names.table} writes recovered`);
        this.failing = false;
        this.inFlight = [];
      } catch (error) {
        this.buffer = [...this.inFlight, ...this.buffer];
        this.inFlight = [];
        if (!this.failing) logger.error({ err: error, pending: this.buffer.length }, `${names.table} write failed; will retry`);
        this.failing = true;
        return;
      }
    }
  }
}
