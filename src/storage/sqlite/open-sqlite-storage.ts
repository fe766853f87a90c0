import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Storage } from '../storage.ts';
import { errorMessage } from '../sql/sql-executor.ts';
import { createSqlStorage } from '../sql/sql-storage.ts';
import type { SqliteDatabase } from './better-sqlite3-driver.ts';
import { openBetterSqlite3 } from './better-sqlite3-driver.ts';
import { migrateSqlite } from './migrate-sqlite.ts';
import { sqliteMigrations } from './migrations.ts';
import { SqliteExecutor } from './sqlite-executor.ts';

const busyTimeoutMs = 5_000;

/** Opens (creating if needed) the SQLite file, tunes it, and brings its schema up to date. */
export async function openSqliteStorage(path: string): Promise<Storage> {
  if (path !== ':memory:') await mkdir(dirname(path), { recursive: true });
  let database: SqliteDatabase | undefined;
  try {
    database = await openBetterSqlite3(path, busyTimeoutMs);
    configure(database);
    migrateSqlite(database, sqliteMigrations);
  } catch (error) {
    database?.close();
    throw new Error(`Cannot open SQLite database ${path}: ${errorMessage(error)}`, { cause: error });
  }
  return createSqlStorage(new SqliteExecutor(database));
}

function configure(database: SqliteDatabase): void {
  // WAL lets readers (dashboard queries) run while the batch writer commits; NORMAL is durable
  // across application crashes and only loses the last commits on power loss in WAL mode.
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma(`busy_timeout = ${busyTimeoutMs}`);
  database.pragma('foreign_keys = ON');
}
