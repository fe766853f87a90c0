import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { adminUsage, type UsageRow, utcDate } from '../support/admin.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, call, chatBody, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { backendNames, createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';

// CONTRACT section 7: GET /admin/usage grouped by user_path, provider, model and day, with
// from/to and the user_path subtree filter, on SQLite and on PostgreSQL.

/** `mock-model` costs exactly $1 per mock answer (12 prompt, 5 completion tokens). */
const pricingYaml = 'pricing:\n  mock-model: { input_per_mtok: 25000, output_per_mtok: 140000 }\n';
const gpt4oMiniCost = (12 * 0.15 + 5 * 0.6) / 1e6;

/** The traffic every test reads: [user path, model selector]. */
const traffic: ReadonlyArray<readonly [string, string]> = [
  ['/team/a', 'openai/mock-model'],
  ['/team/a', 'openai/mock-model'],
  ['/team/b', 'openai-east/mock-model'],
  ['/team/b', 'openai/gpt-4o-mini'],
  ['/team', 'openai/mock-model'],
  ['/team-alpha', 'openai/mock-model'],
  ['/other', 'openai-east/mock-model'],
];

const totalsOf = (requests: number, costUsd: number): Omit<UsageRow, 'key'> => ({
  requests,
  prompt_tokens: 12 * requests,
  completion_tokens: 5 * requests,
  total_tokens: 17 * requests,
  cost_usd: costUsd,
  unpriced_requests: 0,
});

describe.each(backendNames)('GET /admin/usage on %s', (backendName) => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let recordedUntil: number;

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createGatewayDatabase(backendName);
    const env = gatewayEnv(mock, {
      OPENAI_MODELS: 'gpt-4o-mini,mock-model',
      OPENAI_EAST_API_KEY: UPSTREAM_KEY,
      OPENAI_EAST_BASE_URL: mock.url,
      OPENAI_EAST_MODELS: 'mock-model',
      ...database.env,
    });
    gateway = await startGateway({ env, configYaml: pricingYaml });
    storage = await database.open(gateway);
    const requestIds: string[] = [];
    for (const [userPath, model] of traffic) {
      const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        headers: { ...bearer(), 'x-user-path': userPath },
        body: chatBody(model),
      });
      expect(reply.status, reply.text).toBe(200);
      requestIds.push(String(reply.headers['x-request-id']));
    }
    for (const requestId of requestIds) await usageRecordOf(storage, requestId);
    recordedUntil = Date.now();
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await mock?.close();
  });

  it('groups by user_path; the /team filter covers /team and below, not /team-alpha', async () => {
    const rows = await adminUsage(gateway, { group_by: 'user_path', user_path: '/team' });
    expect([...rows.keys()].sort()).toEqual(['/team', '/team/a', '/team/b']);
    expect(rows.get('/team/a')).toEqual({ key: '/team/a', ...totalsOf(2, 2) });
    expect(rows.get('/team')).toEqual({ key: '/team', ...totalsOf(1, 1) });
    const teamB = rows.get('/team/b');
    expect(teamB).toMatchObject({ requests: 2, prompt_tokens: 24, completion_tokens: 10, total_tokens: 34 });
    expect(teamB?.cost_usd).toBeCloseTo(1 + gpt4oMiniCost, 12);
  });

  it('filters the subtree case-insensitively and with a trailing slash', async () => {
    const rows = await adminUsage(gateway, { group_by: 'user_path', user_path: '/TEAM/' });
    expect([...rows.keys()].sort()).toEqual(['/team', '/team/a', '/team/b']);
    const leaf = await adminUsage(gateway, { group_by: 'user_path', user_path: '/team/a' });
    expect([...leaf.keys()]).toEqual(['/team/a']);
  });

  it('groups everything by user_path without a filter', async () => {
    const rows = await adminUsage(gateway, { group_by: 'user_path' });
    expect([...rows.keys()].sort()).toEqual(['/other', '/team', '/team-alpha', '/team/a', '/team/b']);
  });

  it('groups by provider instance', async () => {
    const rows = await adminUsage(gateway, { group_by: 'provider' });
    expect([...rows.keys()].sort()).toEqual(['openai', 'openai-east']);
    expect(rows.get('openai-east')).toEqual({ key: 'openai-east', ...totalsOf(2, 2) });
    expect(rows.get('openai')?.requests).toBe(5);
    const filtered = await adminUsage(gateway, { group_by: 'provider', user_path: '/team' });
    expect(filtered.get('openai')?.requests).toBe(4);
    expect(filtered.get('openai-east')?.requests).toBe(1);
  });

  it('groups by executed model (bare id, across instances)', async () => {
    const rows = await adminUsage(gateway, { group_by: 'model' });
    expect([...rows.keys()].sort()).toEqual(['gpt-4o-mini', 'mock-model']);
    expect(rows.get('mock-model')).toEqual({ key: 'mock-model', ...totalsOf(6, 6) });
    expect(rows.get('gpt-4o-mini')?.cost_usd).toBeCloseTo(gpt4oMiniCost, 12);
  });

  it('groups by UTC day by default', async () => {
    const byDay = await adminUsage(gateway, {});
    expect([...byDay.keys()]).toEqual([utcDate()]);
    expect(byDay.get(utcDate())?.requests).toBe(traffic.length);
    const explicit = await adminUsage(gateway, { group_by: 'day', user_path: '/team' });
    expect(explicit.get(utcDate())?.requests).toBe(5);
  });

  it('filters by provider and by model', async () => {
    const east = await adminUsage(gateway, { group_by: 'user_path', provider: 'openai-east' });
    expect([...east.keys()].sort()).toEqual(['/other', '/team/b']);
    const mini = await adminUsage(gateway, { group_by: 'user_path', model: 'gpt-4o-mini' });
    expect([...mini.keys()]).toEqual(['/team/b']);
  });

  it('honours from and to (dates include the whole day; date-times are exact)', async () => {
    const today = await adminUsage(gateway, { group_by: 'user_path', from: utcDate(), to: utcDate() });
    expect([...today.values()].reduce((sum, row) => sum + row.requests, 0)).toBe(traffic.length);
    expect((await adminUsage(gateway, { from: utcDate(-2), to: utcDate(-1) })).size).toBe(0);
    expect((await adminUsage(gateway, { to: utcDate(-1) })).size).toBe(0);
    const later = new Date(recordedUntil + 1000).toISOString();
    expect((await adminUsage(gateway, { from: later, to: utcDate(1) })).size).toBe(0);
    const around = await adminUsage(gateway, { from: new Date(recordedUntil - 60_000).toISOString(), to: utcDate(1) });
    expect(around.get(utcDate())?.requests).toBe(traffic.length);
  });

  it('with bucket=hour|day returns a series: a row per time bucket and key, oldest first', async () => {
    for (const bucket of ['hour', 'day'] as const) {
      const reply = await call(gateway, `/admin/usage?group_by=provider&bucket=${bucket}`);
      expect(reply.status, reply.text).toBe(200);
      const body = JSON.parse(reply.text) as { bucket: string; rows: Array<UsageRow & { bucket: string }> };
      expect(body.bucket).toBe(bucket);
      const size = bucket === 'hour' ? 3_600_000 : 86_400_000;
      const starts = body.rows.map((row) => Date.parse(row.bucket));
      expect(starts.every((start) => start % size === 0 && start <= recordedUntil && start > recordedUntil - 2 * size)).toBe(true);
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
      const requestsOf = (key: string) => body.rows.filter((row) => row.key === key).reduce((sum, row) => sum + row.requests, 0);
      expect([requestsOf('openai'), requestsOf('openai-east')]).toEqual([5, 2]);
      expect(Object.keys(body.rows[0] ?? {})).toEqual(['bucket', 'key', ...Object.keys(totalsOf(1, 1))]);
    }
  });

  it('echoes the range and the grouping', async () => {
    const reply = await call(gateway, `/admin/usage?group_by=model&from=${utcDate(-1)}&to=${utcDate()}`);
    expect(reply.status).toBe(200);
    const body = JSON.parse(reply.text) as Record<string, unknown>;
    expect(body['group_by']).toBe('model');
    expect(body['from']).toBe(`${utcDate(-1)}T00:00:00.000Z`);
    expect(Date.parse(String(body['to']))).toBe(Date.parse(`${utcDate()}T00:00:00Z`) + 86_400_000);
  });

  it.each([
    ['group_by=week', 'group_by'],
    ['group_by=', 'group_by'],
    ['bucket=week', 'bucket'],
    ['from=yesterday', 'from'],
    ['to=2026-13-45', 'to'],
    [`from=${utcDate(1)}&to=${utcDate(-1)}`, null],
    ['user_path=/a/../b', null],
  ])('refuses %s with a 400 envelope', async (query, param) => {
    const reply = await call(gateway, `/admin/usage?${query}`);
    const error = expectEnvelope(reply, { status: 400, type: 'invalid_request_error' });
    if (param !== null) expect(error.param).toBe(param);
  });

  it('is admin-only: a managed key gets 403, no credentials 401', async () => {
    const created = await call(gateway, '/admin/api-keys', { body: { name: 'reports' } });
    expect(created.status).toBe(201);
    const key = (JSON.parse(created.text) as { key: string }).key;
    expectEnvelope(await call(gateway, '/admin/usage', { token: key }), { status: 403, type: 'permission_error' });
    expectEnvelope(await call(gateway, '/admin/usage', { token: null }), { status: 401, type: 'authentication_error' });
  });
});
