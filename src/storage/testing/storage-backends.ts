import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Client } from 'pg';
import { openStorage } from '../open-storage.ts';
import { migratePostgres } from '../postgres/migrate-postgres.ts';
import { describeDatabase } from '../postgres/open-postgres-storage.ts';
import { loadPg } from '../postgres/pg-driver.ts';
import type { Migration } from '../sql/migration.ts';
import { errorMessage } from '../sql/sql-executor.ts';
import { openBetterSqlite3 } from '../sqlite/better-sqlite3-driver.ts';
import { migrateSqlite } from '../sqlite/migrate-sqlite.ts';
import type { Storage } from '../storage.ts';
import { testServices } from '../../../test/support/services.ts';

/** The PostgreSQL the storage tests use unless DATABASE_URL_TEST says otherwise (trust auth). */
export const defaultTestDatabaseUrl = 'postgres://postgres@127.0.0.1:5432/test';

export interface AppliedMigration {
  readonly version: number;
  readonly name: string;
}

/** One isolated, empty database location (a temp file, or a schema of its own). */
export interface StorageLocation {
  /** Opens a Storage on this location; may be called several times, also concurrently. */
  open(): Promise<Storage>;
  /** The rows of `schema_migrations`, by version, read over a separate connection. */
  appliedMigrations(): Promise<AppliedMigration[]>;
  /** Applies exactly `migrations` without opening a Storage, to build an older schema; returns the versions applied. */
  migrate(migrations: readonly Migration[]): Promise<number[]>;
  /** Removes the location and everything in it. */
  dispose(): Promise<void>;
}

export interface StorageBackend {
  readonly name: 'sqlite' | 'postgresql';
  createLocation(): Promise<StorageLocation>;
}

/**
 * The backends every storage conformance test runs against. PostgreSQL is left out only
 * outside CI when it does not answer (the global setup printed what to start).
 */
export function storageBackends(postgresUrl: string): StorageBackend[] {
  return [
    { name: 'sqlite', createLocation: createSqliteLocation },
    ...(testServices.postgres ? [{ name: 'postgresql' as const, createLocation: () => createPostgresLocation(postgresUrl) }] : []),
  ];
}

async function createSqliteLocation(): Promise<StorageLocation> {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-storage-'));
  // A subdirectory that does not exist yet: openStorage must create it.
  const sqlitePath = join(directory, 'data', 'gateway.db');
  return {
    open: () => openStorage({ type: 'sqlite', sqlitePath }),
    appliedMigrations: async () => {
      const database = await openBetterSqlite3(sqlitePath, 5_000);
      try {
        return database.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as AppliedMigration[];
      } finally {
        database.close();
      }
    },
    migrate: async (migrations) => {
      await mkdir(dirname(sqlitePath), { recursive: true });
      const database = await openBetterSqlite3(sqlitePath, 5_000);
      try {
        return migrateSqlite(database, migrations);
      } finally {
        database.close();
      }
    },
    dispose: () => rm(directory, { recursive: true, force: true }),
  };
}

async function createPostgresLocation(baseUrl: string): Promise<StorageLocation> {
  const { databaseUrl, dispose } = await createTestSchema(baseUrl);
  return {
    open: () => openStorage({ type: 'postgresql', databaseUrl }),
    appliedMigrations: () =>
      withPgClient(databaseUrl, async (client) => {
        const result = await client.query('SELECT version, name FROM schema_migrations ORDER BY version');
        return result.rows as AppliedMigration[];
      }),
    migrate: async (migrations) => {
      const { Pool } = await loadPg();
      const pool = new Pool({ connectionString: databaseUrl, max: 1 });
      try {
        return await migratePostgres(pool, migrations);
      } finally {
        await pool.end();
      }
    },
    dispose,
  };
}

export interface TestSchema {
  /** `baseUrl` with the new schema as its search_path. */
  readonly databaseUrl: string;
  /** Drops the schema and everything in it. */
  dispose(): Promise<void>;
}

/** Creates an empty schema `gw_test_<random>`; fails with a clear message when PostgreSQL does not answer. */
export async function createTestSchema(baseUrl: string): Promise<TestSchema> {
  const schema = `gw_test_${randomBytes(6).toString('hex')}`;
  await withPgClient(baseUrl, (client) => client.query(`CREATE SCHEMA ${schema}`));
  return {
    databaseUrl: withSearchPath(baseUrl, schema),
    dispose: async () => {
      await withPgClient(baseUrl, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    },
  };
}

/** The URL with `options=-c search_path=<schema>`, which pg sends in its startup packet. */
export function withSearchPath(databaseUrl: string, schema: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

async function withPgClient<Result>(databaseUrl: string, body: (client: Client) => Promise<Result>): Promise<Result> {
  const { Client: PgClient } = await loadPg();
  const client = new PgClient({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL for the storage tests does not answer at ${describeDatabase(databaseUrl)} ` +
        `(start it, or point DATABASE_URL_TEST at one): ${errorMessage(error)}`,
      { cause: error },
    );
  }
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}
