import type { Logger } from 'pino';
import { BatchWriter } from '../core/batch-writer.ts';
import type { RequestLogEntry, RequestLogStore } from './request-log-store.ts';

export interface RequestLogRecorderOptions {
  store: RequestLogStore;
  flushIntervalMs: number;
  batchSize: number;
  /** Entries kept in memory while the database is down; beyond it new entries are dropped (logged). */
  maxBuffered?: number;
  logger: Logger;
}

/**
 * Request log entries leave the request path here, as usage records do (UsageRecorder): `record`
 * only queues; a timer writes batches in one transaction each, in order, retrying after a
 * failure; `stop` flushes what is left. On a SQLite file the batches go through the same writer
 * thread as usage records (SqliteExecutor.insertRows).
 */
export class RequestLogRecorder extends BatchWriter<RequestLogEntry> {
  constructor(options: RequestLogRecorderOptions) {
    const { store, ...rest } = options;
    super({
      ...rest,
      write: (batch) => store.insertMany(batch),
      droppedFields: (entry) => ({ request_id: entry.id }),
      messages: {
        dropped: 'request log buffer full: entry dropped',
        failed: 'request log write failed; will retry',
        recovered: 'request log writes recovered',
        lost: 'request log entries could not be written before exit',
      },
    });
  }

  record(entry: RequestLogEntry): void {
    this.enqueue(entry);
  }
}
