import type { SqlValue } from '../sql/sql-executor.ts';
import type { SqliteDatabase, SqliteStatement, SqliteValue } from './better-sqlite3-driver.ts';

/** Prepared statements of one connection, by SQL text. */
export type StatementCache = Map<string, SqliteStatement>;

export function cachedStatement(database: SqliteDatabase, statements: StatementCache, text: string): SqliteStatement {
  let statement = statements.get(text);
  if (statement === undefined) {
    statement = database.prepare(text);
    statements.set(text, statement);
  }
  return statement;
}

/**
 * Inserts every row in one transaction, all or nothing (the main thread and the writer thread
 * share it). `skipExisting` leaves rows whose key is already there (a batch retried after the
 * writer thread died may have been committed by it).
 */
export function insertRowsNow(
  database: SqliteDatabase,
  statements: StatementCache,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly SqlValue[])[],
  skipExisting = false,
): void {
  database.transaction(() => runInserts(database, statements, { table, columns, rows }, skipExisting))();
}

/** The inserts of one batch, in the caller's transaction (a nested `transaction` would add a savepoint). */
function runInserts(database: SqliteDatabase, statements: StatementCache, batch: RowBatch, skipExisting = false): void {
  // An upsert clause covers uniqueness only: a NOT NULL or CHECK failure still fails the batch.
  const onConflict = skipExisting ? ' ON CONFLICT DO NOTHING' : '';
  const { table, columns, rows } = batch;
  const statement = cachedStatement(
    database,
    statements,
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})${onConflict}`,
  );
  for (const row of rows) statement.run(...row.map(toSqliteValue));
}

/** A table's rows for `insertBatchesNow`. */
export interface RowBatch {
  readonly table: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly SqlValue[])[];
}

/**
 * Inserts several batches in one transaction (one commit for all is the saving, ADR 23) and
 * returns each batch's error, or null when its rows are committed. If that transaction fails,
 * nothing of it is committed and each batch is tried again alone, in its own transaction, as it
 * would have been without the others: a batch that fails does not hold back the rest, and none
 * is committed twice. (Savepoints per batch would spare the second try, but they copy every page
 * a batch changes into a statement journal, on every commit.)
 */
export function insertBatchesNow(database: SqliteDatabase, statements: StatementCache, batches: readonly RowBatch[]): unknown[] {
  if (batches.length > 1) {
    try {
      database.transaction(() => {
        for (const batch of batches) runInserts(database, statements, batch);
      })();
      return batches.map(() => null);
    } catch {
      // rolled back whole: each batch alone below
    }
  }
  return batches.map((batch) => {
    try {
      insertRowsNow(database, statements, batch.table, batch.columns, batch.rows);
      return null;
    } catch (error) {
      return error;
    }
  });
}

export function toSqliteValue(value: SqlValue): SqliteValue {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/** Per-connection settings (WAL itself is a property of the file, set once by the main connection). */
export function configureConnection(database: SqliteDatabase, busyTimeoutMs: number): void {
  // NORMAL is durable across application crashes and only loses the last commits on power loss in WAL mode.
  database.pragma('synchronous = NORMAL');
  database.pragma(`busy_timeout = ${busyTimeoutMs}`);
  database.pragma('foreign_keys = ON');
}
