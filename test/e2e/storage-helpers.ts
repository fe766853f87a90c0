import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import pg from 'pg';
import { request } from 'undici';
import { expect } from 'vitest';

import { openStorage } from '../../src/storage/open-storage.ts';
import type { Storage } from '../../src/storage/storage.ts';
import type { UsageRecord } from '../../src/usage/usage-store.ts';
import type { GatewayProcess } from '../support/gateway-process.ts';
import { testPostgresUrl, testServices } from '../support/services.ts';
import { MASTER_KEY, parseJson } from './helpers.ts';
import type { RawReply } from './helpers.ts';

// Helpers of the storage, usage, API key and budget suites: one isolated database per suite
// (a fresh temp cwd for SQLite, a schema of its own for PostgreSQL), direct reads of the
// gateway's usage rows, and admin calls with any method.

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

/** Polls until `probe` returns a value (not undefined); fails after `timeoutMs`. */
export async function eventually<Value>(probe: () => Promise<Value | undefined>, what: string, timeoutMs = 10_000): Promise<Value> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(25);
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

export interface AdminCall {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** JSON-encoded when present. */
  body?: unknown;
  /** Defaults to the master key; null sends no credentials. */
  token?: string | null;
  headers?: Record<string, string>;
}

/** One HTTP exchange with any method, with the master key unless told otherwise. */
export async function call(gateway: GatewayProcess, path: string, options: AdminCall = {}): Promise<RawReply> {
  const token = options.token === undefined ? MASTER_KEY : options.token;
  const headers: Record<string, string> = { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await request(`${gateway.url}${path}`, {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

/** `call`, asserting the status; returns the JSON body. */
export async function callJson(
  gateway: GatewayProcess,
  path: string,
  status: number,
  options: AdminCall = {},
): Promise<Record<string, unknown>> {
  const reply = await call(gateway, path, options);
  expect(reply.status, `${options.method ?? 'GET'} ${path}: ${reply.text}`).toBe(status);
  return parseJson(reply.text);
}

/** One row of GET /admin/usage. */
export interface UsageRow {
  key: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Null when a record of the group has no known price. */
  cost_usd: number | null;
  /** Records of the group without a known price. */
  unpriced_requests: number;
}

/** GET /admin/usage with a query; asserts 200 and the body shape; returns the rows by key. */
export async function adminUsage(gateway: GatewayProcess, query: Record<string, string>): Promise<Map<string, UsageRow>> {
  const body = await callJson(gateway, `/admin/usage?${new URLSearchParams(query).toString()}`, 200);
  expect(Object.keys(body).sort()).toEqual(['from', 'group_by', 'rows', 'to']);
  expect(body['group_by']).toBe(query['group_by'] ?? 'day');
  const rows = body['rows'] as UsageRow[];
  for (const row of rows) {
    expect(Object.keys(row).sort()).toEqual([
      'completion_tokens',
      'cost_usd',
      'key',
      'prompt_tokens',
      'requests',
      'total_tokens',
      'unpriced_requests',
    ]);
  }
  return new Map(rows.map((row) => [row.key, row]));
}

/** Today's UTC date, `YYYY-MM-DD`, shifted by whole days. */
export function utcDate(offsetDays = 0): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

/** Seconds from now to the next UTC midnight. */
export function secondsToUtcMidnight(): number {
  const now = new Date();
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return (midnight - now.getTime()) / 1000;
}
