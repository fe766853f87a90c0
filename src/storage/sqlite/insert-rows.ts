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
  // An upsert clause covers uniqueness only: a NOT NULL or CHECK failure still fails the batch.
  const onConflict = skipExisting ? ' ON CONFLICT DO NOTHING' : '';
  const statement = cachedStatement(
    database,
    statements,
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})${onConflict}`,
  );
  const insertAll = database.transaction((batch: readonly (readonly SqlValue[])[]) => {
    for (const row of batch) statement.run(...row.map(toSqliteValue));
  });
  insertAll(rows);
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
