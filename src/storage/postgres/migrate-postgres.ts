import type { Pool, PoolClient } from 'pg';
import type { Migration } from '../sql/migration.ts';
import { assertOrderedMigrations } from '../sql/migration.ts';
import { inPgTransaction } from './pg-transaction.ts';

/** First key of the advisory lock that serialises migrations; the second is the schema's hash. */
const migrationLockClass = 0x67_77; // "gw"

/**
 * Applies the migrations not yet recorded in `schema_migrations`, each in its own transaction that
 * first takes a transaction-level advisory lock for the current schema: two processes opening the
 * same database at once apply each migration once (the second waits, then sees it recorded).
 * Returns the versions applied now.
 */
export async function migratePostgres(pool: Pool, migrations: readonly Migration[], now: () => number = Date.now): Promise<number[]> {
  assertOrderedMigrations(migrations);
  const applied: number[] = [];
  for (const migration of migrations) {
    if (await inPgTransaction(pool, (client) => applyOnce(client, migration, now()))) applied.push(migration.version);
  }
  return applied;
}

async function applyOnce(client: PoolClient, migration: Migration, appliedAt: number): Promise<boolean> {
  await client.query(`SELECT pg_advisory_xact_lock($1, hashtext(COALESCE(current_schema(), '')))`, [migrationLockClass]);
  await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at BIGINT NOT NULL
  )`);
  const existing = await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
  if (existing.rows.length > 0) return false;
  for (const statement of migration.statements) await client.query(statement);
  await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
    migration.version,
    migration.name,
    appliedAt,
  ]);
  return true;
}
