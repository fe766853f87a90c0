import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Storage } from '../storage.ts';
import { errorMessage } from '../sql/sql-executor.ts';
import { createSqlStorage } from '../sql/sql-storage.ts';
import type { SqliteDatabase } from './better-sqlite3-driver.ts';
import { openBetterSqlite3 } from './better-sqlite3-driver.ts';
import { migrateSqlite } from './migrate-sqlite.ts';
import { sqliteMigrations } from './migrations.ts';
import { configureConnection } from './insert-rows.ts';
import { SqliteExecutor } from './sqlite-executor.ts';
import { SqliteWriter } from './sqlite-writer.ts';

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
  // A file has a writer thread for batch inserts; an in-memory database is private to its connection.
  const writer = path === ':memory:' ? null : new SqliteWriter({ path, busyTimeoutMs });
  return createSqlStorage(new SqliteExecutor(database, writer));
}

function configure(database: SqliteDatabase): void {
  // WAL lets readers (dashboard queries) and the writer thread's connection work on one file.
  database.pragma('journal_mode = WAL');
  configureConnection(database, busyTimeoutMs);
}
