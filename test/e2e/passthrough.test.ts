import { randomBytes } from 'node:crypto';

import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { usageOf } from '../support/admin.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import type { RawReply } from '../support/http.ts';
import {
  MOCK_COMPLETION_TOKENS,
  MOCK_PROMPT_TOKENS,
  type MockRequest,
  type MockUpstream,
  startMockUpstream,
} from '../support/mock-upstream.ts';

// The passthrough /p/{instance}/{path...}: any method, bytes relayed both ways untouched, the
// instance's credentials in place of the client's, hop-by-hop headers dropped, the upstream's
// status and body as they are; one request under user-path, provider and model rules.

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

async function send(
  gateway: GatewayProcess,
  path: string,
  method: Method,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<RawReply & { bytes: Buffer }> {
  const response = await request(`${gateway.url}${path}`, { method, headers: { authorization: `Bearer ${MASTER_KEY}`, ...headers }, body });
  const bytes = Buffer.from(await response.body.arrayBuffer());
  return { status: response.statusCode, headers: response.headers, text: bytes.toString(), bytes };
}

describe('passthrough /p/{instance}/...', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  const received: MockRequest[] = [];

  beforeAll(async () => {
    mock = await startMockUpstream();
    // Echoes what it received: method, query, headers, and the body bytes unchanged.
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']) {
      mock.route(method, '/things*', (incoming, response) => {
        received.push(incoming);
        const status = incoming.path === '/things/teapot' ? 418 : method === 'POST' ? 201 : 200;
        response.writeHead(status, {
          'content-type': String(incoming.headers['content-type'] ?? 'text/plain'),
          'x-upstream-method': method,
          'set-cookie': 'upstream_session=secret',
          connection: 'keep-alive, x-hop',
          'x-hop': 'hop-by-hop',
        });
        response.end(incoming.path === '/things/teapot' ? "I'm a teapot, not an envelope" : incoming.raw);
      });
    }
    const configYaml = `
providers:
  openai:
    type: openai
    api_key: ${UPSTREAM_KEY}
    base_url: ${mock.url}
    models: [mock-model, limited-model]
  other:
    type: openai-compatible
    api_key: sk-other
    base_url: ${mock.url}
    models: [mock-model]
  capped:
    type: openai-compatible
    api_key: sk-capped
    base_url: ${mock.url}
    models: [mock-model]
rate_limits:
  user_paths:
    - path: /pt-limited
      limits: [{ period: minute, max_requests: 1 }]
  providers:
    - name: capped
      limits: [{ period: minute, max_requests: 1 }]
  models:
    - model: limited-model
      limits: [{ period: minute, max_requests: 1 }]
`;
    gateway = await startGateway({ env: { MASTER_KEY }, configYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  beforeEach(() => {
    received.length = 0;
  });

  it('relays a JSON body byte for byte with the query, swapping credentials and dropping hop-by-hop headers', async () => {
    const raw = '{ "b" : 2,\n  "a":[1, 2.50, "é"] ,"model":"mock-model"}';
    const reply = await send(
      gateway,
      '/p/openai/things/echo?x=1&y=%20two',
      'POST',
      {
        'content-type': 'application/json',
        'x-api-key': 'client-secret',
        cookie: 'gateway_session=1',
        'x-user-path': '/team',
        'x-custom': 'kept',
        'proxy-authorization': 'Basic abc',
      },
      raw,
    );
    expect(reply.status).toBe(201);
    expect(reply.text).toBe(raw);
    const upstream = received[0];
    expect(upstream?.raw.toString()).toBe(raw);
    expect(upstream?.path).toBe('/things/echo');
    expect(upstream?.query).toBe('x=1&y=%20two');
    expect(upstream?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(upstream?.headers['x-custom']).toBe('kept');
    for (const name of ['x-api-key', 'cookie', 'x-user-path', 'proxy-authorization']) expect(upstream?.headers[name], name).toBeUndefined();
    expect(JSON.stringify(upstream?.headers)).not.toContain(MASTER_KEY);
    // Back to the client: the upstream's headers minus cookies and hop-by-hop ones.
    expect(reply.headers['x-upstream-method']).toBe('POST');
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.headers['set-cookie']).toBeUndefined();
    expect(reply.headers['x-hop']).toBeUndefined();
    expect(reply.headers['x-request-id']).toBeDefined();
  });

  it('relays every method, binary bodies intact, and a leading v1 segment to the same route', async () => {
    const binary = randomBytes(70_000);
    for (const method of ['PUT', 'PATCH'] as const) {
      const reply = await send(gateway, '/p/openai/things/blob', method, { 'content-type': 'application/octet-stream' }, binary);
      expect(reply.status).toBe(200);
      expect(reply.bytes.equals(binary)).toBe(true);
      expect(received.at(-1)?.raw.equals(binary)).toBe(true);
      expect(received.at(-1)?.method).toBe(method);
    }
    const got = await send(gateway, '/p/openai/v1/things/list?limit=2', 'GET');
    expect(got.status).toBe(200);
    expect(received.at(-1)).toMatchObject({ method: 'GET', path: '/things/list', query: 'limit=2' });
    const head = await send(gateway, '/p/openai/things/blob', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['x-upstream-method']).toBe('HEAD');
    expect(received.at(-1)?.method).toBe('HEAD');
    const untyped = await send(gateway, '/p/openai/things/raw', 'POST', {}, 'no content type');
    expect(untyped.text).toBe('no content type');
    const deleted = await send(gateway, '/p/other/things/item-1', 'DELETE');
    expect(deleted.headers['x-upstream-method']).toBe('DELETE');
    expect(received.at(-1)?.headers.authorization).toBe('Bearer sk-other');
  });

  it('relays an upstream error status and body as they are, not as an envelope', async () => {
    const reply = await send(gateway, '/p/openai/things/teapot', 'GET');
    expect(reply.status).toBe(418);
    expect(reply.text).toBe("I'm a teapot, not an envelope");
    const missing = await send(gateway, '/p/openai/no-such-route', 'GET');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toMatchObject({ error: { message: 'mock upstream: unknown route GET /v1/no-such-route' } });
  });

  it('serves the official client pointed at /p/{instance}, streams included, and records usage', async () => {
    const client = new OpenAI({
      baseURL: `${gateway.url}/p/openai`,
      apiKey: MASTER_KEY,
      maxRetries: 0,
      defaultHeaders: { 'x-user-path': '/pt-usage' },
    });
    const completion = await client.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.usage?.prompt_tokens).toBe(MOCK_PROMPT_TOKENS);
    expect(completion).not.toHaveProperty('provider');
    const stream = await client.chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let chunks = 0;
    for await (const chunk of stream) {
      expect(chunk).not.toHaveProperty('provider');
      chunks += 1;
    }
    expect(chunks).toBeGreaterThan(1);
    const row = await usageOf(gateway, '/pt-usage', 2);
    expect(row?.requests).toBe(2);
    expect(row?.prompt_tokens).toBe(MOCK_PROMPT_TOKENS);
    expect(row?.completion_tokens).toBe(MOCK_COMPLETION_TOKENS);
  });

  it('refuses an unknown instance with a 404 envelope and a missing credential with 401', async () => {
    const unknown = await send(gateway, '/p/nowhere/chat/completions', 'POST', { 'content-type': 'application/json' }, '{}');
    expectEnvelope(unknown, { status: 404, type: 'not_found_error', code: 'unknown_provider' });
    const anonymous = await request(`${gateway.url}/p/openai/things/x`);
    expectEnvelope(
      { status: anonymous.statusCode, headers: anonymous.headers, text: await anonymous.body.text() },
      { status: 401, type: 'authentication_error' },
    );
    expect(received).toHaveLength(0);
  });

  it('counts one request on user-path, provider and model rules: 429 envelopes with Retry-After, upstream not called', async () => {
    const path = { 'x-user-path': '/pt-limited' };
    expect((await send(gateway, '/p/openai/things/a', 'GET', path)).status).toBe(200);
    const byPath = await send(gateway, '/p/openai/things/a', 'GET', path);
    const pathError = expectEnvelope(byPath, { status: 429, type: 'rate_limit_error', provider: 'ratelimit', code: 'rate_limit_exceeded' });
    expect(pathError.message).toBe('rate limit exceeded for /pt-limited: minute request limit of 1 reached');
    expect(Number(byPath.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    expect((await send(gateway, '/p/capped/things/b', 'GET')).status).toBe(200);
    const byProvider = await send(gateway, '/p/capped/things/b', 'GET');
    expect(expectEnvelope(byProvider, { status: 429, type: 'rate_limit_error', provider: 'ratelimit' }).message).toBe(
      'rate limit exceeded for provider capped: minute request limit of 1 reached',
    );

    const body = JSON.stringify({ model: 'limited-model', input: 'x' });
    const json = { 'content-type': 'application/json' };
    expect((await send(gateway, '/p/openai/things/m', 'POST', json, body)).status).toBe(201);
    const byModel = await send(gateway, '/p/openai/things/m', 'POST', json, body);
    expect(expectEnvelope(byModel, { status: 429, type: 'rate_limit_error', provider: 'ratelimit' }).message).toBe(
      'rate limit exceeded for model limited-model: minute request limit of 1 reached',
    );
    expect(received).toHaveLength(3);
  });
});
