import type { Logger } from 'pino';
import { everyInterval } from '../core/shared-interval.ts';
import { capNullableText, capText, storedTextLimits } from '../core/stored-text.ts';
import type { UsageRecord, UsageStore } from './usage-store.ts';

export interface UsageRecorderOptions {
  store: UsageStore;
  flushIntervalMs: number;
  batchSize: number;
  /** Records kept in memory while the database is down; beyond it new records are dropped (logged). */
  maxBuffered?: number;
  logger: Logger;
}

interface Pending {
  seq: number;
  record: UsageRecord;
}

const defaultMaxBuffered = 100_000;

/**
 * Usage records leave the request path here: `record` only queues; a timer writes batches in
 * one transaction each (never one write per request), in order, retrying after a failure.
 * `stop` flushes what is left. Each record gets a sequence number so budgets can tell which
 * of their in-memory charges the database already holds.
 */
export class UsageRecorder {
  private readonly options: UsageRecorderOptions;
  private buffer: Pending[] = [];
  private inFlight: Pending[] = [];
  private nextSeq = 1;
  /** Set while started: removes this recorder's tick. */
  private stopTicking: (() => void) | null = null;
  private flushing: Promise<void> | null = null;
  private failing = false;

  constructor(options: UsageRecorderOptions) {
    this.options = options;
  }

  start(): void {
    // One timer for both recorders (same interval): their batches travel together (ADR 23).
    this.stopTicking = everyInterval(this.options.flushIntervalMs, () => void this.flush());
  }

  /** Queues a record; returns its sequence number. */
  record(record: UsageRecord): number {
    const seq = this.nextSeq++;
    if (this.buffer.length >= (this.options.maxBuffered ?? defaultMaxBuffered)) {
      this.options.logger.error({ request_id: record.requestId }, 'usage buffer full: record dropped');
      return seq;
    }
    this.buffer.push({ seq, record: boundedRecord(record) });
    if (this.buffer.length >= this.options.batchSize && this.flushing === null) void this.flush();
    return seq;
  }

  /** Every record with a sequence number up to this one is written (or was dropped). */
  get settledThrough(): number {
    const firstPending = this.inFlight[0]?.seq ?? this.buffer[0]?.seq ?? this.nextSeq;
    return firstPending - 1;
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
      if (this.stopTicking !== null && !this.failing && this.buffer.length >= this.options.batchSize) void this.flush();
    });
    await this.flushing;
  }

  /**
   * Runs `read` while no batch is being written and none starts, handing it the sequence
   * number up to which records are in the database. A reader that queries the database then
   * sees exactly those records (budgets rely on it to count nothing twice).
   */
  async whileSettled<T>(read: (settledThrough: number) => Promise<T>): Promise<T> {
    while (this.flushing !== null) await this.flushing;
    let done: () => void = () => undefined;
    this.flushing = new Promise<void>((resolve) => {
      done = resolve;
    });
    try {
      return await read(this.settledThrough);
    } finally {
      this.flushing = null;
      done();
    }
  }

  /** Stops the timer and writes what is left, retrying a few times. */
  async stop(): Promise<void> {
    this.stopTicking?.();
    this.stopTicking = null;
    for (let attempt = 0; attempt < 5 && this.pending > 0; attempt += 1) {
      await this.flush();
      if (this.buffer.length > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    if (this.pending > 0) this.options.logger.error({ lost: this.pending }, 'usage records could not be written before exit');
  }

  /**
   * Writes what was queued when the flush began. Records queued meanwhile wait for the next
   * tick or a full batch: writing them at once made batches of a few dozen rows under load,
   * each a commit and a round trip to the writer thread (ADR 23).
   */
  private async writeAll(): Promise<void> {
    let queued = this.buffer.length;
    while (queued > 0 && this.buffer.length > 0) {
      this.inFlight = this.buffer.splice(0, Math.min(this.options.batchSize, queued));
      queued -= this.inFlight.length;
      try {
        await this.options.store.insertMany(this.inFlight.map((pending) => pending.record));
        if (this.failing) this.options.logger.info('usage writes recovered');
        this.failing = false;
        this.inFlight = [];
      } catch (error) {
        this.buffer = [...this.inFlight, ...this.buffer];
        this.inFlight = [];
        if (!this.failing) this.options.logger.error({ err: error, pending: this.buffer.length }, 'usage write failed; will retry');
        this.failing = true;
        return;
      }
    }
  }
}

/** The record with its free-text fields within their caps (src/core/stored-text.ts); the same object when they are. */
function boundedRecord(record: UsageRecord): UsageRecord {
  const { endpoint, model, keyId } = storedTextLimits;
  const apiKeyId = record.apiKeyId;
  if (record.endpoint.length <= endpoint && record.model.length <= model && (apiKeyId === null || apiKeyId.length <= keyId)) return record;
  return {
    ...record,
    endpoint: capText(record.endpoint, endpoint),
    model: capText(record.model, model),
    apiKeyId: capNullableText(apiKeyId, keyId),
  };
}
