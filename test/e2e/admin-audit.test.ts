import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, type Call, callJson } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { backendNames, createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';

// Issue 19: every change through the admin API is in GET /admin/audit with who, when, what,
// before and after (secrets redacted), filtered and paged by cursor; kept across restarts.

interface Entry {
  id: string;
  time: string;
  actor: string;
  action: string;
  resource: string;
  before: unknown;
  after: unknown;
}

interface Page {
  entries: Entry[];
  next_cursor: string | null;
}

describe.each(backendNames)('admin audit trail (%s)', (backendName) => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let env: Record<string, string>;
  const secrets: string[] = [];

  const audit = async (query = ''): Promise<Page> => (await callJson(gateway, `/admin/audit${query}`, 200)) as unknown as Page;
  const change = async (path: string, options: Call, status = 200) => {
    const reply = await call(gateway, path, options);
    expect(reply.status, `${options.method ?? 'POST'} ${path}: ${reply.text}`).toBe(status);
    return reply.text === '' ? {} : (JSON.parse(reply.text) as Record<string, unknown>);
  };
  const latest = async (): Promise<Entry> => {
    const entry = (await audit('?limit=1')).entries[0];
    expect(entry).toBeDefined();
    return entry as Entry;
  };

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createGatewayDatabase(backendName);
    env = gatewayEnv(mock, { OPENAI_MODELS: 'mock-model,mock-model-2', ...database.env });
    gateway = await startGateway({ env });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
    await database?.dispose();
  });

  it('records key changes by master and by an admin key, with before/after and no secrets', async () => {
    const admin = await change('/admin/api-keys', { body: { name: 'ops', role: 'admin' } }, 201);
    secrets.push(String(admin['key']));
    const created = await latest();
    expect(created).toMatchObject({ actor: 'master', action: 'create', resource: `api-keys/${String(admin['id'])}`, before: null });
    expect(created.after).toMatchObject({ id: admin['id'], name: 'ops', role: 'admin' });
    expect(Date.parse(created.time)).toBeGreaterThan(Date.now() - 60_000);

    const adminKey = String(admin['key']);
    const target = await change('/admin/api-keys', { token: adminKey, body: { name: 'svc' } }, 201);
    secrets.push(String(target['key']));
    expect((await latest()).actor).toBe(admin['id']);

    await change(`/admin/api-keys/${String(target['id'])}`, { method: 'PATCH', token: adminKey, body: { allowed_models: ['openai/*'] } });
    const patched = await latest();
    expect(patched).toMatchObject({ actor: admin['id'], action: 'update', resource: `api-keys/${String(target['id'])}` });
    expect(patched.before).toMatchObject({ allowed_models: null });
    expect(patched.after).toMatchObject({ allowed_models: ['openai/*'] });

    const rotated = await change(`/admin/api-keys/${String(target['id'])}/rotate`, { body: { grace_seconds: 60 } });
    secrets.push(String(rotated['key']));
    expect(await latest()).toMatchObject({ actor: 'master', action: 'rotate', resource: `api-keys/${String(target['id'])}` });
    await change(`/admin/api-keys/${String(target['id'])}/deactivate`, { body: {} });
    const deactivated = await latest();
    expect(deactivated).toMatchObject({ action: 'deactivate', before: { active: true }, after: { active: false } });
  });

  it('records budgets, rate limits, virtual models, failover rules and MCP servers', async () => {
    await change('/admin/budgets', { method: 'PUT', body: { user_path: '/team', period: 'daily', amount: 5 } });
    expect(await latest()).toMatchObject({ action: 'upsert', resource: 'budgets', before: null, after: { user_path: '/team', amount: 5 } });
    await change('/admin/budgets', { method: 'PUT', body: { user_path: '/team', period: 'daily', amount: 7 } });
    expect(await latest()).toMatchObject({ before: { amount: 5 }, after: { amount: 7 } });
    await change('/admin/budgets', { method: 'DELETE', body: { user_path: '/team', period: 'daily' } });
    expect(await latest()).toMatchObject({ action: 'delete', before: { amount: 7 }, after: null });

    await change('/admin/rate-limits', { method: 'PUT', body: { user_path: '/team', limit_key: { period: 'minute' }, max_requests: 3 } });
    expect(await latest()).toMatchObject({ action: 'upsert', resource: 'rate-limits', after: { subject: '/team', max_requests: 3 } });

    const model = { name: 'smart', strategy: 'failover', targets: [{ provider: 'openai', model: 'mock-model' }] };
    await change('/admin/virtual-models', { method: 'PUT', body: model });
    expect(await latest()).toMatchObject({ resource: 'virtual-models/smart', before: null, after: { name: 'smart' } });
    await change('/admin/virtual-models', { method: 'DELETE', body: { name: 'smart' } });
    expect(await latest()).toMatchObject({ action: 'delete', resource: 'virtual-models/smart', after: null });

    await change('/admin/failover-rules', { method: 'PUT', body: { model: 'openai/mock-model', fallbacks: ['openai/mock-model-2'] } });
    expect(await latest()).toMatchObject({ resource: 'failover-rules/openai/mock-model', after: { fallbacks: ['openai/mock-model-2'] } });

    const server = { slug: 'tools', url: 'http://127.0.0.1:9/mcp', headers: { 'X-Token': 'mcp-s3cret-value' } };
    secrets.push('mcp-s3cret-value');
    await change('/admin/mcp-servers', { method: 'PUT', body: server });
    const mcp = await latest();
    expect(mcp).toMatchObject({ resource: 'mcp-servers/tools', after: { slug: 'tools', headers: { 'X-Token': '***' } } });
    await change('/admin/mcp-virtual-servers', { method: 'PUT', body: { name: 'bundle', servers: ['tools'] } });
    expect(await latest()).toMatchObject({ resource: 'mcp-virtual-servers/bundle', after: { name: 'bundle' } });
    await change('/admin/mcp-servers/tools', { method: 'DELETE' }, 204);
    expect(await latest()).toMatchObject({ action: 'delete', resource: 'mcp-servers/tools', after: null });
  });

  it('does not record refused requests; keeps no secret anywhere in the trail', async () => {
    const before = (await audit('?limit=500')).entries.length;
    expectEnvelope(await call(gateway, '/admin/budgets', { method: 'PUT', body: { user_path: '/x', amount: -1 } }), {
      status: 400,
      type: 'invalid_request_error',
    });
    const all = await call(gateway, '/admin/audit?limit=500');
    expect((JSON.parse(all.text) as Page).entries).toHaveLength(before);
    for (const secret of secrets) expect(all.text).not.toContain(secret);
  });

  it('filters by actor, action, resource and time, and pages with next_cursor (kept across a restart)', async () => {
    await gateway.stop();
    gateway = await startGateway({ env, cwd: gateway.cwd, startTimeoutMs: 60_000 });
    const all = (await audit('?limit=500')).entries;
    expect(all.length).toBeGreaterThan(10);
    const times = all.map((entry) => Date.parse(entry.time));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const paged: Entry[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await audit(`?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(page.entries.length).toBeLessThanOrEqual(3);
      paged.push(...page.entries);
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(paged).toEqual(all);

    const keys = (await audit('?resource=api-keys')).entries;
    expect(keys.map((entry) => entry.action).sort()).toEqual(['create', 'create', 'deactivate', 'rotate', 'update']);
    expect((await audit('?action=delete')).entries.map((entry) => entry.resource.split('/')[0])).toEqual([
      'mcp-servers',
      'virtual-models',
      'budgets',
    ]);
    const byAdmin = (await audit(`?actor=${keys.find((entry) => entry.action === 'update')?.actor ?? ''}`)).entries;
    expect(byAdmin.map((entry) => entry.action).sort()).toEqual(['create', 'update']);
    expect((await audit(`?to=${encodeURIComponent(all.at(-1)?.time ?? '')}`)).entries).toEqual([]);
    expect((await audit(`?from=${encodeURIComponent(all[0]?.time ?? '')}`)).entries[0]).toEqual(all[0]);
    expectEnvelope(await call(gateway, '/admin/audit?limit=0'), { status: 400, type: 'invalid_request_error', param: 'limit' });
    expectEnvelope(await call(gateway, '/admin/audit?from=yesterday'), { status: 400, type: 'invalid_request_error', param: 'from' });
  });
});
