import type { Migration } from '../sql/migration.ts';
import { assertOrderedMigrations } from '../sql/migration.ts';
import type { SqliteDatabase } from './better-sqlite3-driver.ts';

/**
 * Applies the migrations not yet recorded in `schema_migrations`, each in its own
 * BEGIN IMMEDIATE transaction: the write lock is taken before the version is checked, so two
 * processes opening the same file cannot both apply one. Returns the versions applied now.
 */
export function migrateSqlite(database: SqliteDatabase, migrations: readonly Migration[], now: () => number = Date.now): number[] {
  assertOrderedMigrations(migrations);
  database.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const isApplied = database.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
  const record = database.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const applyOnce = database.transaction((migration: Migration): boolean => {
    if (isApplied.all(migration.version).length > 0) return false;
    for (const statement of migration.statements) database.exec(statement);
    record.run(migration.version, migration.name, now());
    return true;
  });
  return migrations.filter((migration) => applyOnce.immediate(migration)).map((migration) => migration.version);
}
