import { BatchWriter, type BatchSettings } from '../core/batch-writer.ts';
import { capNullableText, capText, storedTextLimits } from '../core/stored-text.ts';
import type { UsageRecord, UsageStore } from './usage-store.ts';

export type UsageRecorderOptions = BatchSettings & { store: UsageStore };

interface Pending {
  seq: number;
  record: UsageRecord;
}

/**
 * Usage records, written off the request path in batches (core/batch-writer.ts). Each record gets
 * a sequence number so budgets can tell which of their in-memory charges the database holds.
 */
export class UsageRecorder extends BatchWriter<Pending> {
  private nextSeq = 1;

  constructor(options: UsageRecorderOptions) {
    const { store, ...rest } = options;
    super({
      ...rest,
      write: (batch) => store.insertMany(batch.map((pending) => pending.record)),
      requestIdOf: (pending) => pending.record.requestId,
      names: { table: 'usage', item: 'record', items: 'records' },
    });
  }

  /** Queues a record; returns its sequence number. */
  record(record: UsageRecord): number {
    const seq = this.nextSeq++;
    this.enqueue({ seq, record: boundedRecord(record) });
    return seq;
  }

  /** Every record with a sequence number up to this one is written (or was dropped). */
  get settledThrough(): number {
    return (this.oldest()?.seq ?? this.nextSeq) - 1;
  }

  /**
   * Runs `read` while no batch is being written and none starts, handing it the sequence
   * number up to which records are in the database. A reader that queries the database then
   * sees exactly those records (budgets rely on it to count nothing twice).
   */
  whileSettled<T>(read: (settledThrough: number) => Promise<T>): Promise<T> {
    return this.whileIdle(() => read(this.settledThrough));
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
