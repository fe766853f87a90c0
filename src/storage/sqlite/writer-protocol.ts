import type { SqlValue } from '../sql/sql-executor.ts';

/** What the main thread hands the SQLite writer thread at start. */
export interface WriterStart {
  path: string;
  busyTimeoutMs: number;
}

export type WriterRequest =
  { kind: 'insert'; id: number; table: string; columns: readonly string[]; rows: readonly (readonly SqlValue[])[] } | { kind: 'close' };

/** A failure crosses the thread boundary as plain data; `code` keeps SQLite's (`SQLITE_BUSY`, ...). */
export interface WriterFailure {
  message: string;
  code: string | null;
}

export type WriterReply =
  { kind: 'ready' } | { kind: 'start_failed'; error: WriterFailure } | { kind: 'done'; id: number; error: WriterFailure | null };

export function toWriterFailure(error: unknown): WriterFailure {
  const code = (error as { code?: unknown } | null)?.code;
  return { message: error instanceof Error ? error.message : String(error), code: typeof code === 'string' ? code : null };
}

export function fromWriterFailure(failure: WriterFailure): Error {
  return Object.assign(new Error(failure.message), failure.code === null ? {} : { code: failure.code });
}
