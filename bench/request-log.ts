import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { RequestLogEntry, RequestLogQuery } from '../src/request-log/request-log-store.ts';
import { maxStatsRows } from '../src/admin/request-stats-route.ts';
import { openStorage } from '../src/storage/open-storage.ts';
import type { Storage } from '../src/storage/storage.ts';
import { loadPg } from '../src/storage/postgres/pg-driver.ts';
import { randomBytes } from 'node:crypto';

// `npm run bench:request-log`: fills a request log with BENCH_ROWS entries (default
// 1,000,000, over 30 days) on SQLite and on PostgreSQL (a schema of its own, dropped after),
// then times the listings of GET /admin/requests at the store: the first page, filtered
// pages, and a page deep in the keyset. Budget (issue 16): p95 under 50 ms.
// BENCH_BACKENDS=sqlite,postgresql; DATABASE_URL_TEST names the PostgreSQL.

const rows = Number(process.env['BENCH_ROWS'] ?? 1_000_000);
const backends = (process.env['BENCH_BACKENDS'] ?? 'sqlite,postgresql').split(',');
const runs = 40;
const day = 86_400_000;
const now = Date.now();
const providers = ['openai', 'anthropic', 'gemini', 'azure', 'local'];

// The test helpers (src/storage/testing/) import vitest, which cannot load outside a test run.
const defaultTestDatabaseUrl = 'postgres://postgres@127.0.0.1:5432/test';

/** A schema of its own on the test database, reached through `search_path`. */
async function createTestSchema(baseUrl: string): Promise<{ databaseUrl: string; dispose(): Promise<void> }> {
  const schema = `gw_bench_${randomBytes(6).toString('hex')}`;
  const run = async (text: string): Promise<void> => {
    const { Client } = await loadPg();
    const client = new Client({ connectionString: baseUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE SCHEMA ${schema}`);
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { databaseUrl: url.toString(), dispose: () => run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`) };
}

function entry(index: number): RequestLogEntry {
  const time = now - 30 * day + Math.floor((index / rows) * 30 * day);
  const provider = providers[index % providers.length] ?? 'openai';
  const status = index % 50 === 0 ? 429 : index % 97 === 0 ? 502 : 200;
  const model = `model-${index % 20}`;
  return {
    rowId: `${time.toString(16).padStart(12, '0')}-${index.toString(16).padStart(8, '0')}`,
    id: `req-${index.toString(36)}`,
    time,
    userPath: `/org/team-${index % 100}/app-${index % 7}`,
    apiKeyId: `key-${index % 50}`,
    endpoint: index % 10 === 0 ? '/v1/embeddings' : '/v1/chat/completions',
    modelRequested: model,
    virtualModel: null,
    attempts: [{ provider, model, status, latencyMs: 120, errorCode: status === 200 ? null : 'upstream_error' }],
    provider,
    model,
    status,
    errorType: status === 200 ? null : status === 429 ? 'rate_limit_error' : 'provider_error',
    errorCode: status === 200 ? null : status === 429 ? 'rate_limit_exceeded' : 'upstream_error',
    rateLimit: status === 429 ? { scope: 'user_path', subject: '/org', period: 'minute', kind: 'requests' } : null,
    latencyMs: 50 + ((index * 7_919) % 2_000),
    ttftMs: null,
    promptTokens: 12,
    completionTokens: 5,
    totalTokens: 17,
    costUsd: 0.0001,
    cacheHit: index % 13 === 0,
    stream: index % 3 === 0,
    userAgent: 'bench/1.0',
    requestBody: null,
    responseBody: null,
    guardrails: null,
  };
}

async function fill(storage: Storage): Promise<void> {
  const batch = 5_000;
  const started = performance.now();
  for (let start = 0; start < rows; start += batch) {
    const entries = Array.from({ length: Math.min(batch, rows - start) }, (_, offset) => entry(start + offset));
    await storage.requestLog.insertMany(entries);
  }
  process.stdout.write(`  filled ${rows} rows in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

async function time(label: string, storage: Storage, query: () => Promise<RequestLogQuery>): Promise<number> {
  const samples: number[] = [];
  let found = 0;
  for (let run = 0; run < runs; run += 1) {
    const resolved = await query();
    const started = performance.now();
    found = (await storage.requestLog.list(resolved)).entries.length;
    samples.push(performance.now() - started);
  }
  samples.sort((left, right) => left - right);
  const p50 = samples[Math.floor(runs * 0.5)] ?? 0;
  const p95 = samples[Math.floor(runs * 0.95)] ?? 0;
  process.stdout.write(
    `  ${label.padEnd(44)} p50 ${p50.toFixed(2).padStart(7)} ms  p95 ${p95.toFixed(2).padStart(7)} ms  (${found} rows)\n`,
  );
  return p95;
}

async function measure(storage: Storage): Promise<number> {
  const deep = await storage.requestLog.list({ limit: 500 });
  let after = deep.next;
  for (let page = 0; page < 19 && after !== null; page += 1) after = (await storage.requestLog.list({ limit: 500, after })).next;
  const p95s = [
    await time('first page (50)', storage, async () => ({ limit: 50 })),
    await time('provider=gemini', storage, async () => ({ limit: 50, provider: 'gemini' })),
    await time('status=5xx', storage, async () => ({ limit: 50, status: { statusClass: 5 } })),
    await time('status=429, code=rate_limit_exceeded', storage, async () => ({
      limit: 50,
      status: { exact: 429 },
      errorCode: 'rate_limit_exceeded',
    })),
    await time('user_path=/org/team-42 (subtree, 1%)', storage, async () => ({ limit: 50, userPath: '/org/team-42' })),
    await time('user_path=/org (subtree, every row)', storage, async () => ({ limit: 50, userPath: '/org' })),
    await time('api_key_id=key-7, last 7 days', storage, async () => ({ limit: 50, apiKeyId: 'key-7', from: now - 7 * day })),
    await time('cache_hit=true, endpoint=/v1/embeddings', storage, async () => ({ limit: 50, cacheHit: true, endpoint: '/v1/embeddings' })),
    // The common values, which SQLite's partial indexes leave out (ADR 23): read in time order.
    await time('status=200', storage, async () => ({ limit: 50, status: { exact: 200 } })),
    await time('status=2xx', storage, async () => ({ limit: 50, status: { statusClass: 2 } })),
    await time('cache_hit=false', storage, async () => ({ limit: 50, cacheHit: false })),
    await time('page after 10,000 rows', storage, async () => ({ limit: 50, ...(after === null ? {} : { after }) })),
    await time('q=req-zz (request id prefix)', storage, async () => ({ limit: 50, text: 'req-zz' })),
  ];

  await aggregates(storage);
  return Math.max(...p95s);
}

/** GET /admin/requests/stats and the API-key listing's activity (reported, not in the verdict). */
async function aggregates(storage: Storage): Promise<void> {
  const timed = async (label: string, run: () => Promise<unknown>): Promise<void> => {
    const samples: number[] = [];
    for (let index = 0; index < 10; index += 1) {
      const started = performance.now();
      await run();
      samples.push(performance.now() - started);
    }
    samples.sort((left, right) => left - right);
    const p50 = samples[5] ?? 0;
    const p95 = samples[9] ?? 0;
    process.stdout.write(`  ${label.padEnd(44)} p50 ${p50.toFixed(2).padStart(7)} ms  p95 ${p95.toFixed(2).padStart(7)} ms\n`);
  };
  const stats = (span: number, groupBy: 'provider' | 'model') => () =>
    storage.requestLog.stats({ from: now - span, to: now + 1, groupBy, maxRows: maxStatsRows });
  await timed('stats by provider, last 24 h', stats(day, 'provider'));
  await timed('stats by model, last 24 h', stats(day, 'model'));
  await timed(`stats by provider, 30 days (newest ${maxStatsRows})`, stats(30 * day, 'provider'));
  await timed('key activity, last 24 h', () => storage.requestLog.keyActivity(now - day));
  await timed('key activity, last 30 days', () => storage.requestLog.keyActivity(now - 30 * day));
}

/** What autovacuum does on its own once a table has grown: planner statistics. */
async function analyze(databaseUrl: string): Promise<void> {
  const { Client } = await loadPg();
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('ANALYZE request_log');
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  let worst = 0;
  for (const backend of backends) {
    process.stdout.write(`${backend}:\n`);
    if (backend === 'sqlite') {
      const directory = await mkdtemp(join(tmpdir(), 'gateway-request-log-bench-'));
      const storage = await openStorage({ type: 'sqlite', sqlitePath: join(directory, 'gateway.db') });
      try {
        await fill(storage);
        worst = Math.max(worst, await measure(storage));
      } finally {
        await storage.close();
        await rm(directory, { recursive: true, force: true });
      }
    } else {
      const schema = await createTestSchema(process.env['DATABASE_URL_TEST'] ?? defaultTestDatabaseUrl);
      const storage = await openStorage({ type: 'postgresql', databaseUrl: schema.databaseUrl });
      try {
        await fill(storage);
        await analyze(schema.databaseUrl);
        worst = Math.max(worst, await measure(storage));
      } finally {
        await storage.close();
        await schema.dispose();
      }
    }
  }
  const verdict = worst < 50 ? 'PASS' : 'FAIL';
  process.stdout.write(
    `${verdict}  GET /admin/requests listings (store) p95 under 50 ms with ${rows} rows (worst ${worst.toFixed(2)} ms)\n`,
  );
  if (worst >= 50) process.exitCode = 1;
}

await main();
