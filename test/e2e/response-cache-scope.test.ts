import { randomUUID } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { gatewayEnv, type GatewayProcess, runGatewayExpectingFailure, startGateway } from '../support/gateway-process.ts';
import { call, callJson, chatBody, type RawReply } from '../support/http.ts';
import { signingKey, signToken } from '../support/mock-jwks.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 27 item 11: the response cache key includes the caller's scope
// (`response_cache.scope` / RESPONSE_CACHE_SCOPE): `user_path` by default, `key`, or `global`
// (the old shared behaviour, opt-in). Tenant B's identical request right after A's is a MISS
// unless the cache is global.

const cache = (reply: RawReply): string => (reply.headers['x-cache'] === 'HIT' ? 'HIT' : 'MISS');

describe('response cache scope', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    mock = await startMockUpstream();
  });

  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
  });

  afterAll(async () => {
    await mock?.close();
  });

  async function start(scope?: string): Promise<GatewayProcess> {
    const env = gatewayEnv(mock, { OPENAI_MODELS: 'mock-model', RESPONSE_CACHE_ENABLED: 'true' });
    if (scope !== undefined) env['RESPONSE_CACHE_SCOPE'] = scope;
    gateway = await startGateway({ env });
    return gateway;
  }

  async function key(started: GatewayProcess, body: Record<string, unknown>): Promise<string> {
    return (await callJson(started, '/admin/api-keys', 201, { body: { name: 'tenant', ...body } }))['key'] as string;
  }

  const chat = (started: GatewayProcess, token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
    call(started, '/v1/chat/completions', { token, body, headers });

  it('user_path (the default): another tenant path misses, the same path hits', async () => {
    const started = await start();
    const tenantA = await key(started, { user_path: '/team/a' });
    const tenantB = await key(started, { user_path: '/team/b' });
    const secondA = await key(started, { user_path: '/team/a' });
    const body = chatBody('mock-model');
    (body['messages'] as Array<Record<string, unknown>>)[0] = { role: 'user', content: `secret ${randomUUID()}` };
    const first = await chat(started, tenantA, body);
    expect(first.status, first.text).toBe(200);
    expect(cache(first)).toBe('MISS');
    expect(cache(await chat(started, tenantA, body))).toBe('HIT');
    const other = await chat(started, tenantB, body);
    expect(other.status, other.text).toBe(200);
    expect(cache(other)).toBe('MISS');
    // Another key on the same path shares its entries; the path matches case-insensitively.
    expect(cache(await chat(started, secondA, body))).toBe('HIT');
    const master = await chat(started, undefined, body, { 'x-user-path': '/TEAM/A' });
    expect(cache(master)).toBe('HIT');
  });

  it('key: two keys on the same path keep their entries apart', async () => {
    const started = await start('key');
    const first = await key(started, {});
    const second = await key(started, {});
    const body = { model: 'mock-model', messages: [{ role: 'user', content: `key ${randomUUID()}` }] };
    const headers = { 'x-user-path': '/shared' };
    expect(cache(await chat(started, first, body, headers))).toBe('MISS');
    expect(cache(await chat(started, first, body, headers))).toBe('HIT');
    expect(cache(await chat(started, first, body, { 'x-user-path': '/elsewhere' }))).toBe('HIT');
    expect(cache(await chat(started, second, body, headers))).toBe('MISS');
    expect(cache(await chat(started, second, body, headers))).toBe('HIT');
  });

  it('key: the same subject from two JWT issuers is two credentials', async () => {
    const [one, two] = await Promise.all([signingKey('one'), signingKey('two')]);
    const issuer = (name: string, jwk: unknown) => `
      - issuer: https://${name}.test/
        keys: { keys: [${JSON.stringify(jwk)}] }
        audiences: [gateway]
        user_path: /${name}/{claims.sub}`;
    const configYaml = `auth:\n  jwt:\n    issuers:${issuer('one', one.publicJwk)}${issuer('two', two.publicJwk)}\n`;
    const env = gatewayEnv(mock, { OPENAI_MODELS: 'mock-model', RESPONSE_CACHE_ENABLED: 'true', RESPONSE_CACHE_SCOPE: 'key' });
    gateway = await startGateway({ env, configYaml });
    const alice = (signing: typeof one, name: string) => signToken(signing, { iss: `https://${name}.test/`, aud: 'gateway', sub: 'alice' });
    const [first, second] = await Promise.all([alice(one, 'one'), alice(two, 'two')]);
    const body = { model: 'mock-model', messages: [{ role: 'user', content: `jwt ${randomUUID()}` }] };
    const asked = await chat(gateway, first, body);
    expect(asked.status, asked.text).toBe(200);
    expect(cache(await chat(gateway, first, body))).toBe('HIT');
    const other = await chat(gateway, second, body);
    expect(other.status, other.text).toBe(200);
    expect(cache(other)).toBe('MISS');
  });

  it('global (opt-in): every caller shares the entries', async () => {
    const started = await start('global');
    const tenantA = await key(started, { user_path: '/team/a' });
    const tenantB = await key(started, { user_path: '/team/b' });
    const body = { model: 'mock-model', messages: [{ role: 'user', content: `global ${randomUUID()}` }] };
    expect(cache(await chat(started, tenantA, body))).toBe('MISS');
    expect(cache(await chat(started, tenantB, body))).toBe('HIT');
  });

  it('refuses an unknown scope at start-up, naming the variable', async () => {
    const failed = await runGatewayExpectingFailure({
      env: gatewayEnv(mock, { RESPONSE_CACHE_ENABLED: 'true', RESPONSE_CACHE_SCOPE: 'tenant' }),
    });
    expect(failed.code).not.toBe(0);
    expect(failed.output).toContain('RESPONSE_CACHE_SCOPE');
  });
});
