import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, chatBody, parseJson } from '../support/http.ts';
import { type MockJwks, signingKey, signToken, startMockJwks, type TestSigningKey } from '../support/mock-jwks.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';

// Issue 19: JWT bearer tokens of trusted issuers, validated with jose against a JWKS on loopback.

const plainIssuer = 'https://idp.example.test/';
const orgIssuer = 'https://org.example.test/';
const downIssuer = 'https://down.example.test/';
const audience = 'model-gateway';

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/jwks`;
}

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('JWT bearer auth', () => {
  let mock: MockUpstream;
  let jwks: MockJwks;
  let gateway: GatewayProcess;
  let database: GatewayDatabase;
  let storage: Storage;
  let keyA: TestSigningKey;
  let keyB: TestSigningKey;
  let orgKey: TestSigningKey;

  const chat = (token: string, model = 'mock-model') => call(gateway, '/v1/chat/completions', { token, body: chatBody(model) });
  const plain = (payload: Record<string, unknown> = {}, key = keyA) =>
    signToken(key, { iss: plainIssuer, aud: audience, sub: 'alice', ...payload });
  const expectRefused = async (token: string, code: string, message: RegExp): Promise<void> => {
    const reply = await chat(token);
    const error = expectEnvelope(reply, { status: 401, type: 'authentication_error', code });
    expect(error.message).toMatch(message);
    expect(reply.headers['www-authenticate']).toMatch(/^Bearer/);
  };

  beforeAll(async () => {
    [keyA, keyB, orgKey] = await Promise.all([signingKey('key-a'), signingKey('key-b', 'ES256'), signingKey('org-1', 'ES256')]);
    mock = await startMockUpstream();
    jwks = await startMockJwks([keyA.publicJwk]);
    database = await createGatewayDatabase('sqlite');
    const configYaml = `
auth:
  jwt:
    jwks_cooldown_seconds: 1
    issuers:
      - issuer: ${plainIssuer}
        jwks_url: ${jwks.url}
        audiences: [${audience}]
      - issuer: ${orgIssuer}
        keys: { keys: [${JSON.stringify(orgKey.publicJwk)}] }
        audiences: [other, ${audience}]
        user_path: /orgs/{claims.org}/users/{claims.sub}
        allowed_models_claim: models
      - issuer: ${downIssuer}
        jwks_url: ${await closedPortUrl()}
        audiences: [${audience}]
virtual_models:
  - name: smart
    target: openai/mock-other
`;
    gateway = await startGateway({ configYaml, env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model,mock-other' }) });
    storage = await database.open(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await jwks?.close();
    await mock?.close();
  });

  it('accepts a valid token and records its subject where a key id would be', async () => {
    const reply = await chat(await plain());
    expect(reply.status, reply.text).toBe(200);
    const record = await usageRecordOf(storage, String(reply.headers['x-request-id']));
    expect(record.apiKeyId).toBe('jwt:alice');
  });

  it('refuses an expired token: 401 token_expired', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectRefused(await plain({ iat: now - 7200, exp: now - 3600 }), 'token_expired', /expired/);
  });

  it('refuses a token that is not valid yet', async () => {
    await expectRefused(await plain({ nbf: Math.floor(Date.now() / 1000) + 3600 }), 'invalid_token', /not valid yet/);
  });

  it('refuses an unknown issuer, naming it', async () => {
    await expectRefused(
      await plain({ iss: 'https://evil.example.test/' }),
      'invalid_token',
      /issuer "https:\/\/evil\.example\.test\/" is not a trusted issuer/,
    );
  });

  it('refuses a wrong audience', async () => {
    await expectRefused(await plain({ aud: 'someone-else' }), 'invalid_token', /audience is not accepted/);
  });

  it('refuses alg none', async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ iss: plainIssuer, aud: audience, sub: 'mallory', exp: now + 600 })}.`;
    await expectRefused(token, 'invalid_token', /algorithm is not allowed/);
  });

  it('refuses HS256 signed with the RSA public key (key confusion)', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(keyA.publicJwk));
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ iss: plainIssuer, aud: audience, sub: 'mallory', exp: now + 600 })
      .setProtectedHeader({ alg: 'HS256', kid: keyA.kid })
      .sign(secret);
    await expectRefused(token, 'invalid_token', /algorithm is not allowed/);
  });

  it('an unknown kid refetches the JWKS at most once per interval; a rotated key then works', async () => {
    expect((await chat(await plain())).status).toBe(200);
    await sleep(1100);
    const before = jwks.fetches;
    // Not published yet: one refetch, then refused.
    await expectRefused(await plain({}, keyB), 'invalid_token', /no signing key .* matches/);
    expect(jwks.fetches).toBe(before + 1);
    // Rotation: published now, but within the cooldown nothing is refetched.
    jwks.keys = [keyA.publicJwk, keyB.publicJwk];
    await expectRefused(await plain({ sub: 'bob' }, keyB), 'invalid_token', /no signing key/);
    expect(jwks.fetches).toBe(before + 1);
    await sleep(1100);
    const reply = await chat(await plain({ sub: 'carol' }, keyB));
    expect(reply.status, reply.text).toBe(200);
    expect(jwks.fetches).toBe(before + 2);
  });

  it('keeps the cached keys while the JWKS endpoint is down, with a warning', async () => {
    await sleep(1100);
    jwks.down = true;
    try {
      const unknown = await signingKey('key-unknown');
      await expectRefused(await plain({}, unknown), 'invalid_token', /no signing key/);
      const reply = await chat(await plain({ sub: 'dave' }));
      expect(reply.status, reply.text).toBe(200);
    } finally {
      jwks.down = false;
    }
    expect(gateway.logs().some((line) => line['level'] === 40 && String(line['msg']).includes('JWKS refresh failed'))).toBe(true);
  });

  it('with no keys cached and the endpoint down: 401 with a clear message and a warning log', async () => {
    const unused = await signingKey('down-1');
    const token = await signToken(unused, { iss: downIssuer, aud: audience, sub: 'erin' });
    await expectRefused(token, 'invalid_token', /signing keys of issuer https:\/\/down\.example\.test\/ cannot be fetched/);
    expect(gateway.logs().some((line) => line['level'] === 40 && String(line['msg']).includes('no keys cached'))).toBe(true);
  });

  it('binds the user path from the claim template; a missing claim is 401', async () => {
    const token = await signToken(orgKey, { iss: orgIssuer, aud: audience, sub: 'frank', org: 'acme', models: ['mock-model'] });
    const usage = await call(gateway, '/v1/usage', { token, headers: { 'x-user-path': '/elsewhere' } });
    expect(usage.status, usage.text).toBe(200);
    expect(parseJson(usage.text)['user_path']).toBe('/orgs/acme/users/frank');
    const missing = await signToken(orgKey, { iss: orgIssuer, aud: audience, sub: 'frank', models: ['mock-model'] });
    await expectRefused(missing, 'invalid_token', /"org" claim/);
  });

  it('a token that is not a JWT goes on to the managed-key path', async () => {
    expectEnvelope(await chat('sk-gw-not-a-key'), { status: 401, type: 'authentication_error', code: 'invalid_credentials' });
  });

  it('a JWT is not an admin credential', async () => {
    const reply = await call(gateway, '/admin/api-keys', { token: await plain() });
    expect(reply.status).toBe(401);
  });
});
