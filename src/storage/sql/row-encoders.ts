import type { EncodedRecord, RowEncoderName, SqlValue } from './sql-executor.ts';
import { requestLogColumns, requestLogRowValues } from './request-log-row.ts';

/** A batch of records as table rows. */
export interface EncodedRows {
  readonly table: string;
  readonly columns: readonly string[];
  readonly rows: SqlValue[][];
}

/**
 * Turns records into the rows of their table. Runs on the SQLite writer thread for a file
 * database (the records cross the thread boundary as they are: one structured clone, no row
 * arrays or JSON built on the event loop), and on the caller's thread otherwise.
 */
export function encodeRows<Kind extends RowEncoderName>(kind: Kind, records: readonly EncodedRecord<Kind>[]): EncodedRows {
  switch (kind) {
    case 'request_log':
      return { table: 'request_log', columns: requestLogColumns, rows: records.map(requestLogRowValues) };
    default:
      throw new Error(`no row encoder for ${String(kind)}`);
  }
}
