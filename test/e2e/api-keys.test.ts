import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { call, callJson, chatBody } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';

// CONTRACT section 3: managed API keys `sk-gw-…`, created, listed and deactivated through the
// admin API, bound to a user path, refused on /admin, and persisted.

const keyFormat = /^sk-gw-[A-Za-z0-9_-]{43}$/;
const messages = [{ role: 'user' as const, content: 'Say hello' }];

interface CreatedKey {
  id: string;
  key: string;
  name: string;
  redacted: string;
  user_path: string | null;
  active: boolean;
  created_at: string;
  expires_at: string | null;
  deactivated_at: string | null;
}

async function createKey(gateway: GatewayProcess, body: Record<string, unknown>, token?: string | null): Promise<CreatedKey> {
  return (await callJson(gateway, '/admin/api-keys', 201, { body, token })) as unknown as CreatedKey;
}

async function listKeys(gateway: GatewayProcess, token?: string | null): Promise<{ text: string; keys: Array<Omit<CreatedKey, 'key'>> }> {
  const reply = await call(gateway, '/admin/api-keys', { token });
  expect(reply.status, reply.text).toBe(200);
  const keys = JSON.parse(reply.text) as Array<Omit<CreatedKey, 'key'>>;
  expect(Array.isArray(keys)).toBe(true);
  return { text: reply.text, keys };
}

const chatStatus = async (gateway: GatewayProcess, headers: Record<string, string>): Promise<number> =>
  (await call(gateway, '/v1/chat/completions', { token: null, headers, body: chatBody('mock-model') })).status;

describe('managed API keys (master key set)', () => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  const output: string[] = [];
  const created: CreatedKey[] = [];

  const keyOf = async (body: Record<string, unknown>): Promise<CreatedKey> => {
    const key = await createKey(gateway, body);
    created.push(key);
    return key;
  };

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createGatewayDatabase('sqlite');
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model', LOG_LEVEL: 'debug' }) });
    storage = await database.open(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await mock?.close();
  });

  it('creates a key: 201 with the plaintext key, id and redacted form', async () => {
    const key = await keyOf({ name: ' ci-runner ', user_path: 'team//a/' });
    expect(key.key).toMatch(keyFormat);
    expect(key.redacted).toBe(`sk-gw-…${key.key.slice(-4)}`);
    expect(typeof key.id).toBe('string');
    expect(key.id.length).toBeGreaterThan(0);
    expect(key).toMatchObject({ name: 'ci-runner', user_path: '/team/a', active: true, expires_at: null, deactivated_at: null });
    expect(Math.abs(Date.parse(key.created_at) - Date.now())).toBeLessThan(60_000);
    const other = await keyOf({ name: 'second' });
    expect(other.key).toMatch(keyFormat);
    expect(other.key).not.toBe(key.key);
    expect(other.id).not.toBe(key.id);
    expect(other.user_path).toBeNull();
  });

  it('lists keys without any secret', async () => {
    const { text, keys } = await listKeys(gateway);
    for (const key of created) {
      const listed = keys.find((entry) => entry.id === key.id);
      expect(listed).toMatchObject({ name: key.name, redacted: key.redacted, user_path: key.user_path, active: true });
      expect(text).not.toContain(key.key);
      expect(text).not.toContain(createHash('sha256').update(key.key).digest('hex'));
    }
    for (const entry of keys) expect(Object.keys(entry)).not.toContain('key');
  });

  it('authenticates /v1 with the key (Bearer and x-api-key); an unknown sk-gw- key gets 401', async () => {
    const [key] = created;
    const client = openAIClient(gateway, key?.key);
    const completion = await client.chat.completions.create({ model: 'mock-model', messages });
    expect(completion.choices[0]?.message.content).toBeTruthy();
    expect(await chatStatus(gateway, { 'x-api-key': key?.key ?? '' })).toBe(200);
    const forged = `sk-gw-${'A'.repeat(43)}`;
    const reply = await call(gateway, '/v1/chat/completions', { token: forged, body: chatBody('mock-model') });
    expectEnvelope(reply, { status: 401, type: 'authentication_error' });
  });

  it('refuses a managed key on /admin with 403 permission_error', async () => {
    const key = created[1]?.key ?? '';
    for (const [method, path] of [
      ['GET', '/admin/api-keys'],
      ['POST', '/admin/api-keys'],
      ['GET', '/admin/usage'],
      ['GET', '/admin/budgets'],
    ] as const) {
      const body = method === 'POST' ? { name: 'escalation' } : undefined;
      expectEnvelope(await call(gateway, path, { method, token: key, body }), { status: 403, type: 'permission_error' });
    }
    const viaHeader = await call(gateway, '/admin/api-keys', { token: null, headers: { 'x-api-key': key } });
    expectEnvelope(viaHeader, { status: 403, type: 'permission_error' });
  });

  it('charges a bound key to its path whatever X-User-Path says; /v1/usage reports that path', async () => {
    const key = created[0] as CreatedKey;
    const client = openAIClient(gateway, key.key);
    const { response } = await client.chat.completions
      .create({ model: 'mock-model', messages }, { headers: { 'X-User-Path': '/other' } })
      .withResponse();
    const record = await usageRecordOf(storage, response.headers.get('x-request-id') ?? '');
    expect(record.userPath).toBe('/team/a');
    expect(record.apiKeyId).toBe(key.id);
    await usageRecordOf(storage, (await chargedRequestId(client)) ?? '');
    const usage = await callJson(gateway, '/v1/usage', 200, { token: key.key, headers: { 'x-user-path': '/other' } });
    expect(usage['user_path']).toBe('/team/a');
    // Every request of this key so far ran at /team/a: the Bearer call, the x-api-key call, and two here.
    expect(usage['usage']).toMatchObject({ requests: 4, prompt_tokens: 48, completion_tokens: 20, total_tokens: 68 });
  });

  it('deactivates a key: 200, then 401 on /v1', async () => {
    const key = await keyOf({ name: 'short-lived' });
    expect(await chatStatus(gateway, { authorization: `Bearer ${key.key}` })).toBe(200);
    const deactivated = await callJson(gateway, `/admin/api-keys/${key.id}/deactivate`, 200, { method: 'POST' });
    expect(deactivated).toMatchObject({ id: key.id, active: false });
    expect(deactivated['deactivated_at']).toEqual(expect.any(String));
    expect(deactivated).not.toHaveProperty('key');
    const thrown = await rejectionOf(openAIClient(gateway, key.key).chat.completions.create({ model: 'mock-model', messages }));
    expect(thrown).toBeInstanceOf(OpenAI.AuthenticationError);
    expectClientError(thrown, { status: 401, type: 'authentication_error' });
    const { keys } = await listKeys(gateway);
    expect(keys.find((entry) => entry.id === key.id)).toMatchObject({ active: false });
    const again = await callJson(gateway, `/admin/api-keys/${key.id}/deactivate`, 200, { method: 'POST' });
    expect(again['deactivated_at']).toBe(deactivated['deactivated_at']);
  });

  it('answers 404 for deactivating an unknown id', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'no-such-key']) {
      const reply = await call(gateway, `/admin/api-keys/${id}/deactivate`, { method: 'POST' });
      expectEnvelope(reply, { status: 404, type: 'not_found_error' });
    }
  });

  it.each([
    ['a missing name', {}, 'name'],
    ['an empty name', { name: '' }, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['a numeric name', { name: 42 }, 'name'],
    ['a name of 201 characters', { name: 'x'.repeat(201) }, 'name'],
    ['expires_at in the past', { name: 'late', expires_at: new Date(Date.now() - 60_000).toISOString() }, 'expires_at'],
    ['expires_at that is no date', { name: 'late', expires_at: 'tomorrow' }, 'expires_at'],
    ['a bad user_path', { name: 'bad', user_path: '/a/../b' }, null],
    ['an array body', [{ name: 'list' }], null],
  ])('refuses %s with 400', async (_label, body, param) => {
    const reply = await call(gateway, '/admin/api-keys', { body });
    const error = expectEnvelope(reply, { status: 400, type: 'invalid_request_error' });
    if (param !== null) expect(error.param).toBe(param);
  });

  it('stops accepting a key once its expires_at has passed', async () => {
    const key = await keyOf({ name: 'expiring', expires_at: new Date(Date.now() + 1_500).toISOString() });
    expect(key.expires_at).not.toBeNull();
    expect(await chatStatus(gateway, { authorization: `Bearer ${key.key}` })).toBe(200);
    await sleep(Math.max(0, Date.parse(key.expires_at ?? '') - Date.now()) + 100);
    expect(await chatStatus(gateway, { authorization: `Bearer ${key.key}` })).toBe(401);
    const { keys } = await listKeys(gateway);
    expect(keys.find((entry) => entry.id === key.id)?.active).toBe(false);
  });

  it('keeps keys across a restart; the plaintext never appears in the logs', async () => {
    const before = (await listKeys(gateway)).keys;
    output.push(...gateway.output);
    expect(await gateway.stop()).toBe(0);
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model', LOG_LEVEL: 'debug' }), cwd: gateway.cwd });
    expect((await listKeys(gateway)).keys).toEqual(before);
    const [bound, plain, deactivated] = created;
    const bearerOf = (key: CreatedKey | undefined) => ({ authorization: `Bearer ${key?.key ?? ''}` });
    expect(await chatStatus(gateway, bearerOf(bound))).toBe(200);
    expect(await chatStatus(gateway, { 'x-api-key': plain?.key ?? '' })).toBe(200);
    expect(await chatStatus(gateway, bearerOf(deactivated))).toBe(401);
    const usage = await callJson(gateway, '/v1/usage', 200, { token: bound?.key ?? '' });
    expect(usage['user_path']).toBe('/team/a');
    output.push(...gateway.output);
    expect(output.length).toBeGreaterThan(0);
    const joined = output.join('\n');
    for (const key of created) expect(joined).not.toContain(key.key);
    expect(joined).not.toContain(UPSTREAM_KEY);
  });
});

/** One more call charged to the key, whatever the header; its request id. */
async function chargedRequestId(client: OpenAI): Promise<string | null> {
  const { response } = await client.chat.completions
    .create({ model: 'mock-model', messages }, { headers: { 'X-User-Path': '/team/b' } })
    .withResponse();
  return response.headers.get('x-request-id');
}

describe('managed API keys without a master key', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let adminKey: CreatedKey | undefined;
  const env = (upstream: MockUpstream): Record<string, string> => ({
    OPENAI_API_KEY: UPSTREAM_KEY,
    OPENAI_BASE_URL: upstream.url,
    OPENAI_MODELS: 'mock-model',
  });

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: env(mock) });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('is open until a key exists; then /v1 needs a key and /admin is closed to all but admin-role keys', async () => {
    expect(await chatStatus(gateway, {})).toBe(200);
    expect((await listKeys(gateway, null)).keys).toEqual([]);
    const admin = await createKey(gateway, { name: 'first', role: 'admin' }, null);
    adminKey = admin;
    const refused = await call(gateway, '/v1/chat/completions', { token: null, body: chatBody('mock-model') });
    expectEnvelope(refused, { status: 401, type: 'authentication_error' });
    expect(await chatStatus(gateway, { authorization: 'Bearer wrong' })).toBe(401);
    expect(await chatStatus(gateway, { authorization: `Bearer ${admin.key}` })).toBe(200);
    expect(await chatStatus(gateway, { 'x-api-key': admin.key })).toBe(200);
    // Nothing fails open: the first key closed /admin too (issue 27).
    expectEnvelope(await call(gateway, '/admin/api-keys', { token: null }), { status: 401, type: 'authentication_error' });
    const anonymous = await call(gateway, '/admin/api-keys', { token: null, body: { name: 'intruder', role: 'admin' } });
    expectEnvelope(anonymous, { status: 401, type: 'authentication_error' });
    const user = await createKey(gateway, { name: 'user' }, admin.key);
    expect((await listKeys(gateway, admin.key)).keys.map((entry) => entry.id)).toEqual([admin.id, user.id]);
    expectEnvelope(await call(gateway, '/admin/api-keys', { token: user.key }), { status: 403, type: 'permission_error' });
    expect(await chatStatus(gateway, { authorization: `Bearer ${user.key}` })).toBe(200);
  });

  it('still needs a key after keys are deactivated, and after a restart', async () => {
    const admin = adminKey ?? expect.unreachable('the first test creates the admin key');
    for (const listed of (await listKeys(gateway, admin.key)).keys.filter((entry) => entry.id !== admin.id)) {
      await callJson(gateway, `/admin/api-keys/${listed.id}/deactivate`, 200, { method: 'POST', token: admin.key });
    }
    expect(await chatStatus(gateway, {})).toBe(401);
    expect(await gateway.stop()).toBe(0);
    gateway = await startGateway({ env: env(mock), cwd: gateway.cwd });
    expect(await chatStatus(gateway, {})).toBe(401);
    expect((await call(gateway, '/admin/api-keys', { token: null, body: { name: 'after-restart' } })).status).toBe(401);
    const fresh = await createKey(gateway, { name: 'after-restart' }, admin.key);
    expect(await chatStatus(gateway, { authorization: `Bearer ${fresh.key}` })).toBe(200);
  });
});
