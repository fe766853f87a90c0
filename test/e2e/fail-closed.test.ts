import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, runGatewayExpectingFailure, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { chatBody, type RawReply } from '../support/http.ts';
import { signingKey, signToken, type TestSigningKey } from '../support/mock-jwks.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 27 "Nothing fails open": without MASTER_KEY but with another credential mechanism the
// admin API is closed; open mode (no credential at all) serves loopback Host names only and
// listens on loopback only unless ALLOW_OPEN_NETWORK=true.

interface HostCall {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One exchange with an explicit `Host` (undici and fetch set their own): what a DNS-rebinding page sends. */
function callAs(gateway: GatewayProcess, path: string, host: string, options: HostCall = {}): Promise<RawReply> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = {
    host,
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...options.headers,
  };
  return new Promise<RawReply>((resolve, reject) => {
    const outgoing = httpRequest(
      { host: '127.0.0.1', port: gateway.port, path, method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }));
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const upstreamEnv = (mock: MockUpstream): Record<string, string> => ({
  OPENAI_API_KEY: UPSTREAM_KEY,
  OPENAI_BASE_URL: mock.url,
  OPENAI_MODELS: 'mock-model',
});

const newAdminKey = { name: 'intruder', role: 'admin' };

describe('JWT issuers without MASTER_KEY', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let key: TestSigningKey;

  beforeAll(async () => {
    mock = await startMockUpstream();
    key = await signingKey('k1');
    const configYaml = `auth:
  jwt:
    issuers:
      - issuer: https://idp.example
        audiences: [gateway]
        keys: ${JSON.stringify([key.publicJwk])}
`;
    // HOST 0.0.0.0: a credential is configured, so this is not open mode and it may listen there.
    gateway = await startGateway({ env: { ...upstreamEnv(mock), HOST: '0.0.0.0' }, configYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('closes the admin API: anonymous, a JWT and a wrong key get 401, nothing is created', async () => {
    const local = `127.0.0.1:${gateway.port}`;
    const token = await signToken(key, { iss: 'https://idp.example', aud: 'gateway', sub: 'alice' });
    expectEnvelope(await callAs(gateway, '/admin/api-keys', local, { body: newAdminKey }), { status: 401, type: 'authentication_error' });
    expectEnvelope(await callAs(gateway, '/admin/api-keys', local), { status: 401, type: 'authentication_error' });
    const withJwt = await callAs(gateway, '/admin/api-keys', local, { body: newAdminKey, headers: { authorization: `Bearer ${token}` } });
    expectEnvelope(withJwt, { status: 401, type: 'authentication_error' });
    const wrong = await callAs(gateway, '/admin/api-keys', local, { body: newAdminKey, headers: { authorization: 'Bearer sk-gw-guess' } });
    expectEnvelope(wrong, { status: 401, type: 'authentication_error' });
    // The JWT still works where it belongs.
    const chat = await callAs(gateway, '/v1/chat/completions', local, {
      body: chatBody('mock-model'),
      headers: { authorization: `Bearer ${token}` },
    });
    expect(chat.status, chat.text).toBe(200);
  });

  it('logs one line naming what is closed', () => {
    const lines = gateway.logs().filter((entry) => /MASTER_KEY/.test(String(entry['msg'])));
    expect(lines).toHaveLength(1);
    expect(String(lines[0]?.['msg'])).toMatch(/JWT issuers.*\/admin is closed/);
  });
});

describe('open mode', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: upstreamEnv(mock) });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('refuses a DNS-rebinding Host (with its matching Origin) on chat and admin: 403 host_not_allowed', async () => {
    for (const host of [
      'rebind.attacker.test',
      `rebind.attacker.test:${gateway.port}`,
      `10.1.2.3:${gateway.port}`,
      `127.0.0.1.nip.io:${gateway.port}`,
    ]) {
      const headers = { origin: `http://${host}` };
      const chat = await callAs(gateway, '/v1/chat/completions', host, { body: chatBody('mock-model'), headers });
      expectEnvelope(chat, { status: 403, type: 'permission_error', code: 'host_not_allowed' });
      const admin = await callAs(gateway, '/admin/api-keys', host, { body: newAdminKey, headers });
      expectEnvelope(admin, { status: 403, type: 'permission_error', code: 'host_not_allowed' });
      for (const path of ['/v1/models', '/health', '/dashboard/session.json', '/openapi.json']) {
        expectEnvelope(await callAs(gateway, path, host), { status: 403, type: 'permission_error', code: 'host_not_allowed' });
      }
    }
    expect(mock.requests.filter((recorded) => recorded.path.endsWith('/chat/completions'))).toEqual([]);
  });

  it('serves loopback names and addresses', async () => {
    expect((await callAs(gateway, '/health', `localhost:${gateway.port}`)).status).toBe(200);
    for (const host of [
      `127.0.0.1:${gateway.port}`,
      `localhost:${gateway.port}`,
      `[::1]:${gateway.port}`,
      `app.localhost:${gateway.port}`,
    ]) {
      const chat = await callAs(gateway, '/v1/chat/completions', host, {
        body: chatBody('mock-model'),
        headers: { origin: `http://${host}` },
      });
      expect(chat.status, `${host}: ${chat.text}`).toBe(200);
    }
  });

  it('closes when the first key is created: the admin API then refuses anonymous callers', async () => {
    const local = `localhost:${gateway.port}`;
    const created = await callAs(gateway, '/admin/api-keys', local, { body: { name: 'first', role: 'admin' } });
    expect(created.status, created.text).toBe(201);
    expectEnvelope(await callAs(gateway, '/admin/api-keys', local, { body: newAdminKey }), { status: 401, type: 'authentication_error' });
    expectEnvelope(await callAs(gateway, '/v1/chat/completions', local, { body: chatBody('mock-model') }), {
      status: 401,
      type: 'authentication_error',
    });
    const adminKey = String((JSON.parse(created.text) as { key: string }).key);
    const listed = await callAs(gateway, '/admin/api-keys', local, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(listed.status, listed.text).toBe(200);
    // Only admin-role keys administer without a master key: a viewer or an ordinary key is refused.
    for (const role of ['viewer', 'user']) {
      const made = await callAs(gateway, '/admin/api-keys', local, {
        body: { name: role, role },
        headers: { authorization: `Bearer ${adminKey}` },
      });
      expect(made.status, made.text).toBe(201);
      const key = String((JSON.parse(made.text) as { key: string }).key);
      const read = await callAs(gateway, '/admin/api-keys', local, { headers: { authorization: `Bearer ${key}` } });
      expectEnvelope(read, { status: 403, type: 'permission_error', code: 'admin_required' });
    }
    // With a credential configured, the Host check of open mode no longer applies.
    const remote = await callAs(gateway, '/v1/chat/completions', 'gateway.example', {
      body: chatBody('mock-model'),
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(remote.status, remote.text).toBe(200);
  });
});

describe('open mode on a non-loopback address', () => {
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
  });

  afterAll(async () => {
    await mock?.close();
  });

  it('refuses to start without ALLOW_OPEN_NETWORK=true, naming the variable', async () => {
    const { code, output } = await runGatewayExpectingFailure({ env: { ...upstreamEnv(mock), HOST: '0.0.0.0' } });
    expect(code).toBe(1);
    expect(output).toContain('ALLOW_OPEN_NETWORK');
  });

  it('starts with ALLOW_OPEN_NETWORK=true and still serves loopback Host names only', async () => {
    const gateway = await startGateway({ env: { ...upstreamEnv(mock), HOST: '0.0.0.0', ALLOW_OPEN_NETWORK: 'true' } });
    try {
      const chat = await callAs(gateway, '/v1/chat/completions', `localhost:${gateway.port}`, { body: chatBody('mock-model') });
      expect(chat.status, chat.text).toBe(200);
      const rebind = await callAs(gateway, '/v1/chat/completions', 'rebind.attacker.test', { body: chatBody('mock-model') });
      expectEnvelope(rebind, { status: 403, type: 'permission_error', code: 'host_not_allowed' });
    } finally {
      await gateway.stop();
    }
  });
});
