import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, callJson } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 19: managed keys carry allowed_models, allowed_endpoints and a role; PATCH changes them;
// rotation keeps the old secret for a grace period; admin and viewer roles on /admin.

interface KeyView {
  id: string;
  key?: string;
  allowed_models: string[] | null;
  allowed_endpoints: string[] | null;
  role: string;
  previous_key_expires_at: string | null;
}

describe('managed key access, rotation and scoped admin', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  const create = async (body: Record<string, unknown>, token?: string) =>
    (await callJson(gateway, '/admin/api-keys', 201, { body, token })) as unknown as KeyView & { key: string };
  const modelsStatus = async (token: string) => (await call(gateway, '/v1/models', { token })).status;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model' }) });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('creates keys with allowlists and a role, lists and patches them', async () => {
    const created = await create({ name: 'scoped', allowed_models: ['openai/*', 'smart', 'openai/*'], allowed_endpoints: ['/mcp'] });
    expect(created).toMatchObject({ allowed_models: ['openai/*', 'smart'], allowed_endpoints: ['/mcp'], role: 'user' });
    const plain = await create({ name: 'plain' });
    expect(plain).toMatchObject({ allowed_models: null, allowed_endpoints: null, role: 'user', previous_key_expires_at: null });

    const patched = await callJson(gateway, `/admin/api-keys/${created.id}`, 200, {
      method: 'PATCH',
      body: { allowed_models: null, allowed_endpoints: ['/v1/chat/completions'], role: 'viewer' },
    });
    expect(patched).toMatchObject({ id: created.id, allowed_models: null, allowed_endpoints: ['/v1/chat/completions'], role: 'viewer' });
    expect(patched).not.toHaveProperty('key');
    const reply = await call(gateway, '/admin/api-keys');
    const listed = JSON.parse(reply.text) as KeyView[];
    expect(listed.find((row) => row.id === created.id)).toMatchObject({ allowed_endpoints: ['/v1/chat/completions'], role: 'viewer' });
    expect(JSON.stringify(listed)).not.toContain(created.key);
  });

  it.each([
    ['allowed_models', { name: 'x', allowed_models: 'openai/*' }],
    ['allowed_models', { name: 'x', allowed_models: ['ok', ''] }],
    ['allowed_endpoints', { name: 'x', allowed_endpoints: [42] }],
    ['role', { name: 'x', role: 'root' }],
  ])('refuses an invalid %s with 400 naming it', async (param, body) => {
    expectEnvelope(await call(gateway, '/admin/api-keys', { body }), { status: 400, type: 'invalid_request_error', param });
  });

  it('PATCH validates and answers 404 for an unknown key', async () => {
    const key = await create({ name: 'patch-target' });
    const bad = await call(gateway, `/admin/api-keys/${key.id}`, { method: 'PATCH', body: { role: 'owner' } });
    expectEnvelope(bad, { status: 400, type: 'invalid_request_error', param: 'role' });
    const unknown = await call(gateway, '/admin/api-keys/00000000-0000-4000-8000-000000000000', {
      method: 'PATCH',
      body: { role: 'user' },
    });
    expectEnvelope(unknown, { status: 404, type: 'not_found_error', code: 'api_key_not_found' });
  });

  it('rotates: the new key works at once, the old one until the grace ends', async () => {
    const original = await create({ name: 'rotating' });
    const rotated = (await callJson(gateway, `/admin/api-keys/${original.id}/rotate`, 200, {
      body: { grace_seconds: 2 },
    })) as unknown as KeyView & {
      key: string;
    };
    expect(rotated.id).toBe(original.id);
    expect(rotated.key).not.toBe(original.key);
    expect(rotated.previous_key_expires_at).not.toBeNull();
    expect(await modelsStatus(rotated.key)).toBe(200);
    expect(await modelsStatus(original.key)).toBe(200);
    await sleep(2500);
    expect(await modelsStatus(original.key)).toBe(401);
    expect(await modelsStatus(rotated.key)).toBe(200);

    const again = (await callJson(gateway, `/admin/api-keys/${original.id}/rotate`, 200, { body: {} })) as unknown as { key: string };
    expect(await modelsStatus(rotated.key)).toBe(401);
    expect(await modelsStatus(again.key)).toBe(200);
    const bad = await call(gateway, `/admin/api-keys/${original.id}/rotate`, { body: { grace_seconds: -1 } });
    expectEnvelope(bad, { status: 400, type: 'invalid_request_error', param: 'grace_seconds' });
  });

  it('viewer keys may GET /admin only; admin keys may manage; user keys keep 403', async () => {
    const viewer = await create({ name: 'viewer', role: 'viewer' });
    const admin = await create({ name: 'admin', role: 'admin' });
    const user = await create({ name: 'user' });

    expect((await call(gateway, '/admin/api-keys', { token: viewer.key })).status).toBe(200);
    expect((await call(gateway, '/admin/budgets', { token: viewer.key })).status).toBe(200);
    const put = await call(gateway, '/admin/budgets', {
      method: 'PUT',
      token: viewer.key,
      body: { user_path: '/v', period: 'daily', amount: 1 },
    });
    expectEnvelope(put, { status: 403, type: 'permission_error', code: 'admin_required' });
    expectEnvelope(await call(gateway, '/admin/api-keys', { token: viewer.key, body: { name: 'nope' } }), {
      status: 403,
      type: 'permission_error',
    });

    const made = await create({ name: 'made-by-admin' }, admin.key);
    expect(await modelsStatus(made.key)).toBe(200);
    const budget = await call(gateway, '/admin/budgets', {
      method: 'PUT',
      token: admin.key,
      body: { user_path: '/a', period: 'daily', amount: 1 },
    });
    expect(budget.status, budget.text).toBe(200);

    expectEnvelope(await call(gateway, '/admin/api-keys', { token: user.key }), {
      status: 403,
      type: 'permission_error',
      code: 'admin_required',
    });
    expect(await modelsStatus(viewer.key)).toBe(200);
  });

  it('GET /admin/whoami names the admin credential and its role (the dashboard hides what a viewer may not do)', async () => {
    const viewer = await create({ name: 'whoami-viewer', role: 'viewer' });
    const admin = await create({ name: 'whoami-admin', role: 'admin' });
    const user = await create({ name: 'whoami-user' });
    expect(await callJson(gateway, '/admin/whoami', 200)).toEqual({ kind: 'master', role: 'admin', key_id: null });
    expect(await callJson(gateway, '/admin/whoami', 200, { token: viewer.key })).toEqual({
      kind: 'api_key',
      role: 'viewer',
      key_id: viewer.id,
    });
    expect(await callJson(gateway, '/admin/whoami', 200, { token: admin.key })).toEqual({
      kind: 'api_key',
      role: 'admin',
      key_id: admin.id,
    });
    expectEnvelope(await call(gateway, '/admin/whoami', { token: user.key }), {
      status: 403,
      type: 'permission_error',
      code: 'admin_required',
    });
    expectEnvelope(await call(gateway, '/admin/whoami', { token: 'wrong' }), { status: 401, type: 'authentication_error' });
  });

  it('the rate_limit and budget shorthand makes rules on the key user path, validated and audited like the admin calls', async () => {
    const key = await create({
      name: 'limited',
      user_path: '/team/svc',
      rate_limit: { period: 'minute', max_requests: 2 },
      budget: { period: 'daily', amount: 3 },
    });
    const rules = (await callJson(gateway, '/admin/rate-limits', 200))['rate_limits'] as Array<Record<string, unknown>>;
    expect(rules.find((rule) => rule.subject === '/team/svc')).toMatchObject({ period_seconds: 60, max_requests: 2 });
    const budgets = (await callJson(gateway, '/admin/budgets', 200))['budgets'] as Array<Record<string, unknown>>;
    expect(budgets.find((budget) => budget.user_path === '/team/svc')).toMatchObject({ period: 'daily', amount: 3 });
    const audit = (await callJson(gateway, '/admin/audit?limit=3', 200))['entries'] as Array<Record<string, unknown>>;
    expect(audit.map((entry) => entry.resource)).toEqual([`api-keys/${key.id}`, 'budgets', 'rate-limits']);

    const noPath = await call(gateway, '/admin/api-keys', { body: { name: 'x', budget: { period: 'daily', amount: 1 } } });
    expectEnvelope(noPath, { status: 400, type: 'invalid_request_error', param: 'user_path' });
    const badBudget = await call(gateway, '/admin/api-keys', {
      body: { name: 'x', user_path: '/b', budget: { period: 'daily', amount: -1 } },
    });
    expectEnvelope(badBudget, { status: 400, type: 'invalid_request_error', param: 'budget.amount' });
    const badLimit = await call(gateway, '/admin/api-keys', { body: { name: 'x', user_path: '/b', rate_limit: { period: 'fortnight' } } });
    expectEnvelope(badLimit, { status: 400, type: 'invalid_request_error' });
    expect(JSON.parse(badLimit.text).error.param).toMatch(/^rate_limit/);
    const listed = JSON.parse((await call(gateway, '/admin/api-keys')).text) as Array<{ name: string }>;
    expect(listed.filter((row) => row.name === 'x')).toEqual([]);
  });
});
