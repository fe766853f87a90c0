import type { Logger } from 'pino';
import { everyInterval } from '../core/shared-interval.ts';
import type { RequestLogEntry, RequestLogStore } from './request-log-store.ts';

export interface RequestLogRecorderOptions {
  store: RequestLogStore;
  flushIntervalMs: number;
  batchSize: number;
  /** Entries kept in memory while the database is down; beyond it new entries are dropped (logged). */
  maxBuffered?: number;
  logger: Logger;
}

const defaultMaxBuffered = 100_000;

/**
 * Request log entries leave the request path here, as usage records do (UsageRecorder): `record`
 * only queues; a timer writes batches in one transaction each, in order, retrying after a
 * failure; `stop` flushes what is left. On a SQLite file the batches go through the same writer
 * thread as usage records (SqliteExecutor.insertRows).
 */
export class RequestLogRecorder {
  private readonly options: RequestLogRecorderOptions;
  private buffer: RequestLogEntry[] = [];
  /** Set while started: removes this recorder's tick. */
  private stopTicking: (() => void) | null = null;
  private flushing: Promise<void> | null = null;
  private failing = false;

  constructor(options: RequestLogRecorderOptions) {
    this.options = options;
  }

  start(): void {
    // One timer for both recorders (same interval): their batches travel together (ADR 23).
    this.stopTicking = everyInterval(this.options.flushIntervalMs, () => void this.flush());
  }

  record(entry: RequestLogEntry): void {
    if (this.buffer.length >= (this.options.maxBuffered ?? defaultMaxBuffered)) {
      this.options.logger.error({ request_id: entry.id }, 'request log buffer full: entry dropped');
      return;
    }
    this.buffer.push(entry);
    if (this.buffer.length >= this.options.batchSize && this.flushing === null) void this.flush();
  }

  get pending(): number {
    return this.buffer.length;
  }

  /** Writes everything queued so far; concurrent callers share the running flush. */
  async flush(): Promise<void> {
    while (this.flushing !== null) await this.flushing;
    if (this.buffer.length === 0) return;
    this.flushing = this.writeAll().finally(() => {
      this.flushing = null;
      // A batch that filled up during the write goes at once, as a batch filled while idle
      // does (not after a failure: the timer paces the retries).
      if (this.stopTicking !== null && !this.failing && this.buffer.length >= this.options.batchSize) void this.flush();
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
    if (this.pending > 0) this.options.logger.error({ lost: this.pending }, 'request log entries could not be written before exit');
  }

  /** Writes what was queued when the flush began; later entries wait for the next tick or a full batch (as UsageRecorder). */
  private async writeAll(): Promise<void> {
    let queued = this.buffer.length;
    while (queued > 0 && this.buffer.length > 0) {
      const batch = this.buffer.splice(0, Math.min(this.options.batchSize, queued));
      queued -= batch.length;
      try {
        await this.options.store.insertMany(batch);
        if (this.failing) this.options.logger.info('request log writes recovered');
        this.failing = false;
      } catch (error) {
        this.buffer = batch.concat(this.buffer);
        if (!this.failing) this.options.logger.error({ err: error, pending: this.buffer.length }, 'request log write failed; will retry');
        this.failing = true;
        return;
      }
    }
  }
}
