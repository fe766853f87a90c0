/** A value better-sqlite3 can bind (it rejects booleans). */
export type SqliteValue = string | number | bigint | Buffer | null;

export interface SqliteStatement {
  /** True when the statement returns rows (SELECT, RETURNING). */
  readonly reader: boolean;
  run(...values: SqliteValue[]): { readonly changes: number };
  all(...values: SqliteValue[]): unknown[];
}

/** A transaction function; `immediate` takes the write lock before running (BEGIN IMMEDIATE). */
export interface SqliteTransaction<Arguments extends unknown[], Result> {
  (...values: Arguments): Result;
  immediate(...values: Arguments): Result;
}

/**
 * The part of better-sqlite3's Database the stores use. Kept small on purpose: `node:sqlite`
 * (Node 22+) can be adapted to it later without touching the stores.
 */
export interface SqliteDatabase {
  readonly open: boolean;
  prepare(source: string): SqliteStatement;
  exec(source: string): unknown;
  pragma(source: string, options?: { readonly simple?: boolean }): unknown;
  transaction<Arguments extends unknown[], Result>(body: (...values: Arguments) => Result): SqliteTransaction<Arguments, Result>;
  close(): unknown;
}

/**
 * Opens a better-sqlite3 database. Imported on first use, so that a PostgreSQL deployment never
 * loads the native module. The assignment checks that better-sqlite3 satisfies the interface above.
 */
export async function openBetterSqlite3(path: string, busyTimeoutMs: number): Promise<SqliteDatabase> {
  const { default: Database } = await import('better-sqlite3');
  const database: SqliteDatabase = new Database(path, { timeout: busyTimeoutMs });
  return database;
}
