import type { SqlValue } from '../sql/sql-executor.ts';

/** What the main thread hands the SQLite writer thread at start. */
export interface WriterStart {
  path: string;
  busyTimeoutMs: number;
}

/** One table's rows, inserted all or nothing. */
export interface InsertBatch {
  id: number;
  table: string;
  columns: readonly string[];
  rows: readonly (readonly SqlValue[])[];
}

/** The batches of one event-loop turn travel together and are committed in one transaction (each batch alone if that fails). */
export type WriterRequest = { kind: 'insert'; batches: readonly InsertBatch[] } | { kind: 'close' };

/** A failure crosses the thread boundary as plain data; `code` keeps SQLite's (`SQLITE_BUSY`, ...). */
export interface WriterFailure {
  message: string;
  code: string | null;
}

/** Per batch of the request, in its order: null when its rows are committed. */
export type WriterReply =
  | { kind: 'ready' }
  | { kind: 'start_failed'; error: WriterFailure }
  | { kind: 'done'; results: readonly { id: number; error: WriterFailure | null }[] };

export function toWriterFailure(error: unknown): WriterFailure {
  const code = (error as { code?: unknown } | null)?.code;
  return { message: error instanceof Error ? error.message : String(error), code: typeof code === 'string' ? code : null };
}

export function fromWriterFailure(failure: WriterFailure): Error {
  return Object.assign(new Error(failure.message), failure.code === null ? {} : { code: failure.code });
}
