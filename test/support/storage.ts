import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import pg from 'pg';
import { expect } from 'vitest';

import { openStorage } from '../../src/storage/open-storage.ts';
import type { Storage } from '../../src/storage/storage.ts';
import type { UsageRecord } from '../../src/usage/usage-store.ts';
import type { GatewayProcess } from './gateway-process.ts';
import { testPostgresUrl, testServices } from './services.ts';
import { eventually } from './wait.ts';

// The database of the storage, usage, API key and budget suites: one isolated database per
// suite (a fresh temp cwd for SQLite, a schema of its own for PostgreSQL), and direct reads of
// the gateway's usage rows.

/** The PostgreSQL every suite uses (trust auth, DATABASE_URL_TEST); in CI a suite fails when it does not answer. */
export const POSTGRES_URL = testPostgresUrl;

export type BackendName = 'sqlite' | 'postgresql';
/** Both backends; outside CI without PostgreSQL, SQLite alone (the global setup says so). */
export const backendNames: readonly BackendName[] = testServices.postgres ? ['sqlite', 'postgresql'] : ['sqlite'];

/** Where one suite's gateway keeps its data. */
export interface GatewayDatabase {
  readonly name: BackendName;
  /** STORAGE_TYPE and DATABASE_URL for PostgreSQL; nothing for SQLite (./data/gateway.db in the cwd). */
  readonly env: Record<string, string>;
  /** Opens the gateway's database from the test process. */
  open(gateway: GatewayProcess): Promise<Storage>;
  /** Drops the PostgreSQL schema. */
  dispose(): Promise<void>;
}

/** SQLite in the gateway's cwd, or a fresh PostgreSQL schema `gw_e2e_<random>`. */
export async function createGatewayDatabase(name: BackendName): Promise<GatewayDatabase> {
  if (name === 'sqlite') {
    return {
      name,
      env: {},
      open: (gateway) => openStorage({ type: 'sqlite', sqlitePath: join(gateway.cwd, 'data', 'gateway.db') }),
      dispose: async () => {},
    };
  }
  const schema = `gw_e2e_${randomBytes(6).toString('hex')}`;
  await withPostgres((client) => client.query(`CREATE SCHEMA ${schema}`));
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const databaseUrl = url.toString();
  return {
    name,
    env: { STORAGE_TYPE: 'postgresql', DATABASE_URL: databaseUrl },
    open: () => openStorage({ type: 'postgresql', databaseUrl }),
    dispose: async () => {
      await withPostgres((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    },
  };
}

async function withPostgres<Result>(body: (client: pg.Client) => Promise<Result>): Promise<Result> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`PostgreSQL does not answer at ${POSTGRES_URL}: ${reason}`, { cause: error });
  }
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** The usage record of one request id, once the batch writer has stored it. */
export async function usageRecordOf(storage: Storage, requestId: string, timeoutMs = 10_000): Promise<UsageRecord> {
  const records = await eventually(
    async () => {
      const found = await storage.usage.findByRequestId(requestId);
      return found.length > 0 ? found : undefined;
    },
    `a usage record for request ${requestId}`,
    timeoutMs,
  );
  expect(records, `exactly one usage record for ${requestId}`).toHaveLength(1);
  return records[0] as UsageRecord;
}
