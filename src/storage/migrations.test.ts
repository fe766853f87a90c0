import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migratePostgres } from './postgres/migrate-postgres.ts';
import { postgresMigrations } from './postgres/migrations.ts';
import { loadPg } from './postgres/pg-driver.ts';
import type { Migration } from './sql/migration.ts';
import { openBetterSqlite3 } from './sqlite/better-sqlite3-driver.ts';
import { migrateSqlite } from './sqlite/migrate-sqlite.ts';
import { sqliteMigrations } from './sqlite/migrations.ts';
import { createTestSchema, defaultTestDatabaseUrl } from './testing/storage-backends.ts';
import { testServices } from '../../test/support/services.ts';

const postgresUrl = process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl;

/** One dialect's migration runner on a fresh, empty database. */
interface Migrator {
  readonly shipped: readonly Migration[];
  migrate(migrations: readonly Migration[]): Promise<number[]>;
  tableExists(table: string): Promise<boolean>;
  versions(): Promise<number[]>;
  dispose(): Promise<void>;
}

async function sqliteMigrator(): Promise<Migrator> {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-migrations-'));
  const database = await openBetterSqlite3(join(directory, 'gateway.db'), 5_000);
  const column = <Value>(text: string, ...values: string[]): Value[] =>
    (database.prepare(text).all(...values) as Record<string, Value>[]).map((row) => Object.values(row)[0] as Value);
  return {
    shipped: sqliteMigrations,
    migrate: async (migrations) => migrateSqlite(database, migrations),
    tableExists: async (table) => column<string>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?`, table).length === 1,
    versions: async () => column<number>('SELECT version FROM schema_migrations ORDER BY version'),
    dispose: async () => {
      database.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

async function postgresMigrator(): Promise<Migrator> {
  const schema = await createTestSchema(postgresUrl);
  const { Pool } = await loadPg();
  const pool = new Pool({ connectionString: schema.databaseUrl, max: 2 });
  return {
    shipped: postgresMigrations,
    migrate: (migrations) => migratePostgres(pool, migrations),
    tableExists: async (table) => (await pool.query('SELECT to_regclass($1) AS found', [table])).rows[0]?.found !== null,
    versions: async () =>
      (await pool.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map((row) => Number(row.version)),
    dispose: async () => {
      await pool.end();
      await schema.dispose();
    },
  };
}

const later: Migration = { version: 100, name: 'later_things', statements: ['CREATE TABLE later_things (id TEXT PRIMARY KEY)'] };
const broken: Migration = {
  version: 101,
  name: 'broken',
  statements: ['CREATE TABLE half_done (id TEXT PRIMARY KEY)', 'CREATE TABLE half_done (id TEXT PRIMARY KEY)'],
};

describe.each([
  { name: 'sqlite', create: sqliteMigrator },
  ...(testServices.postgres ? [{ name: 'postgresql', create: postgresMigrator }] : []),
])('schema migrations: $name', ({ create }) => {
  let migrator: Migrator;
  beforeEach(async () => {
    migrator = await create();
  });
  afterEach(async () => {
    await migrator.dispose();
  });

  it('applies the shipped migrations once, then nothing', async () => {
    expect(await migrator.migrate(migrator.shipped)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    expect(await migrator.migrate(migrator.shipped)).toEqual([]);
    expect(await migrator.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    for (const table of [
      'usage_records',
      'api_keys',
      'budgets',
      'rate_limit_rules',
      'virtual_models',
      'mcp_servers',
      'mcp_virtual_servers',
      'responses',
      'response_items',
      'response_pointers',
      'failover_rules',
    ]) {
      expect(await migrator.tableExists(table)).toBe(true);
    }
  });

  it('upgrades a database at version 3 by applying only rate_limit_rules and virtual_models', async () => {
    expect(await migrator.migrate(migrator.shipped.filter((migration) => migration.version <= 3))).toEqual([1, 2, 3]);
    expect(await migrator.tableExists('rate_limit_rules')).toBe(false);
    expect(await migrator.migrate(migrator.shipped)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    expect(await migrator.tableExists('rate_limit_rules')).toBe(true);
    expect(await migrator.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
  });

  it('upgrades a database at version 4 by applying only virtual_models', async () => {
    expect(await migrator.migrate(migrator.shipped.filter((migration) => migration.version <= 4))).toEqual([1, 2, 3, 4]);
    expect(await migrator.tableExists('virtual_models')).toBe(false);
    expect(await migrator.migrate(migrator.shipped)).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    expect(await migrator.tableExists('virtual_models')).toBe(true);
    expect(await migrator.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
  });

  it('applies only an appended migration on a migrated database', async () => {
    await migrator.migrate(migrator.shipped);
    expect(await migrator.migrate([...migrator.shipped, later])).toEqual([100]);
    expect(await migrator.tableExists('later_things')).toBe(true);
    expect(await migrator.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 100]);
  });

  it('applies a missing version below the highest applied one (versions may leave gaps, filled later)', async () => {
    const skipped = migrator.shipped.at(-2);
    expect(skipped).toBeDefined();
    await migrator.migrate(migrator.shipped.filter((migration) => migration !== skipped));
    expect(await migrator.migrate(migrator.shipped)).toEqual([skipped?.version]);
    expect(await migrator.versions()).toEqual(migrator.shipped.map((migration) => migration.version));
  });

  it('rolls a failing migration back whole and does not record it', async () => {
    await expect(migrator.migrate([...migrator.shipped, later, broken])).rejects.toThrow();
    expect(await migrator.versions()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 100]);
    expect(await migrator.tableExists('half_done')).toBe(false);
  });

  it('refuses a list whose versions are not ascending', async () => {
    await expect(migrator.migrate([later, ...migrator.shipped])).rejects.toThrow('ascending');
    expect(await migrator.tableExists('usage_records')).toBe(false);
  });
});
