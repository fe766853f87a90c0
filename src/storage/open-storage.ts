import type { Storage, StorageSettings } from './storage.ts';
import { openPostgresStorage } from './postgres/open-postgres-storage.ts';
import { openSqliteStorage } from './sqlite/open-sqlite-storage.ts';

/**
 * Opens the configured database and applies pending schema migrations.
 * SQLite: creates the file's directory, WAL, synchronous=NORMAL. PostgreSQL: a pool of 10.
 */
export async function openStorage(settings: StorageSettings): Promise<Storage> {
  switch (settings.type) {
    case 'sqlite':
      return openSqliteStorage(settings.sqlitePath);
    case 'postgresql':
      return openPostgresStorage(settings.databaseUrl);
  }
}
