import { BatchWriter, type BatchSettings } from '../core/batch-writer.ts';
import type { RequestLogEntry, RequestLogStore } from './request-log-store.ts';

export type RequestLogRecorderOptions = BatchSettings & { store: RequestLogStore };

/** Request log entries, written off the request path in batches (core/batch-writer.ts), on SQLite by the usage records' writer thread. */
export class RequestLogRecorder extends BatchWriter<RequestLogEntry> {
  constructor(options: RequestLogRecorderOptions) {
    const { store, ...rest } = options;
    super({
      ...rest,
      write: (batch) => store.insertMany(batch),
      requestIdOf: (entry) => entry.id,
      names: { table: 'request log', item: 'entry', items: 'entries' },
    });
  }

  record(entry: RequestLogEntry): void {
    this.enqueue(entry);
  }
}
