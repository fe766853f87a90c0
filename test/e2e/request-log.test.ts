import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { listRequests, loggedRequest } from '../support/admin.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { bearer, call, callJson, chatBody, rawRequest } from '../support/http.ts';
import type { MockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { closeAll, instancesEnv, startMocks } from '../support/virtual-models.ts';
import { eventually } from '../support/wait.ts';

// Issue 16: one request log entry per request that reached a model endpoint, whatever its
// outcome, with the fields of "Names fixed here"; bodies kept for errors only here
// (REQUEST_LOG_BODIES=errors), redacted.

const models = ['mock-model', 'fo-500', 'error-500', 'hang', 'cached-model'];

/** `mock-model` and `cached-model` cost exactly $1 per mock answer (12 prompt, 5 completion tokens). */
const configYaml = `
pricing:
  mock-model: { input_per_mtok: 25000, output_per_mtok: 140000 }
  cached-model: { input_per_mtok: 25000, output_per_mtok: 140000 }
virtual_models:
  - name: fo-alias
    strategy: failover
    targets:
      - { provider: openai, model: fo-500 }
      - { provider: openai-b, model: fo-500 }
rate_limits:
  user_paths:
    - path: /limited
      limits: [{ period: minute, max_requests: 1 }]
budgets:
  user_paths:
    - path: /broke
      limits: [{ period: daily, amount: 0.5 }]
`;

function requestIdOf(reply: { headers: Record<string, unknown> }): string {
  const id = reply.headers['x-request-id'];
  expect(typeof id).toBe('string');
  return id as string;
}

describe('request log (SQLite, bodies on errors)', () => {
  let mocks: MockUpstream[];
  let database: GatewayDatabase;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(2);
    mocks[0]?.setBehavior('fo-500', { kind: 'error', status: 500 });
    database = await createGatewayDatabase('sqlite');
    gateway = await startGateway({
      env: instancesEnv(mocks, models, { REQUEST_LOG_BODIES: 'errors', RESPONSE_CACHE_ENABLED: 'true', UPSTREAM_RETRIES: '0' }),
      configYaml,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await database?.dispose();
    await closeAll(mocks ?? []);
  });

  /** A chat call that bypasses the response cache unless `cache` is set. */
  const chat = (
    model: string,
    options: { headers?: Record<string, string>; extra?: Record<string, unknown>; token?: string | null; cache?: boolean } = {},
  ) =>
    call(gateway, '/v1/chat/completions', {
      body: chatBody(model, options.extra),
      headers: { ...(options.cache === true ? {} : { 'cache-control': 'no-store' }), ...options.headers },
      ...(options.token === undefined ? {} : { token: options.token }),
    });

  it('logs a served request with its fields, tokens and cost as metered, and no bodies (not an error)', async () => {
    const reply = await chat('mock-model', { headers: { 'x-user-path': '/team/app', 'user-agent': 'log-test/1.0' } });
    expect(reply.status, reply.text).toBe(200);
    const entry = await loggedRequest(gateway, requestIdOf(reply));
    expect(entry).toMatchObject({
      user_path: '/team/app',
      api_key_id: null,
      endpoint: '/v1/chat/completions',
      model_requested: 'mock-model',
      virtual_model: null,
      provider: 'openai',
      model: 'mock-model',
      status: 200,
      error_type: null,
      error_code: null,
      rate_limit: null,
      prompt_tokens: 12,
      completion_tokens: 5,
      total_tokens: 17,
      cost_usd: 1,
      cache_hit: false,
      stream: false,
      ttft_ms: null,
      user_agent: 'log-test/1.0',
      request_body: null,
      response_body: null,
    });
    expect(entry.attempts).toEqual([
      { provider: 'openai', model: 'mock-model', status: 200, latency_ms: expect.any(Number), error_code: null },
    ]);
    expect(entry.latency_ms).toBeGreaterThan(0);
    expect(Date.parse(entry.time)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('logs a stream with its time to first byte and its metered tokens', async () => {
    const reply = await chat('mock-model', { extra: { stream: true } });
    expect(reply.status).toBe(200);
    const entry = await loggedRequest(gateway, requestIdOf(reply));
    expect(entry).toMatchObject({ status: 200, stream: true, total_tokens: 17, provider: 'openai' });
    expect(entry.ttft_ms).toBeGreaterThan(0);
    expect(entry.ttft_ms).toBeLessThanOrEqual(entry.latency_ms);
  });

  it('logs an Anthropic Messages stream with its time to first byte', async () => {
    const reply = await call(gateway, '/v1/messages', {
      body: { model: 'mock-model', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Say hello' }] },
    });
    expect(reply.status, reply.text).toBe(200);
    const entry = await loggedRequest(gateway, requestIdOf(reply));
    expect(entry).toMatchObject({ endpoint: '/v1/messages', status: 200, stream: true, provider: 'openai', total_tokens: 17 });
    expect(entry.ttft_ms).toBeGreaterThan(0);
  });

  it('logs a Responses stream with its time to first byte', async () => {
    const reply = await call(gateway, '/v1/responses', { body: { model: 'mock-model', input: 'Say hello', stream: true } });
    expect(reply.status, reply.text).toBe(200);
    const entry = await loggedRequest(gateway, requestIdOf(reply));
    expect(entry).toMatchObject({ endpoint: '/v1/responses', status: 200, stream: true, provider: 'openai', total_tokens: 17 });
    expect(entry.ttft_ms).toBeGreaterThan(0);
  });

  it('logs a cache hit as such, at no cost', async () => {
    const first = await chat('cached-model', { extra: { temperature: 0 }, cache: true });
    expect(first.status).toBe(200);
    await loggedRequest(gateway, requestIdOf(first));
    const second = await chat('cached-model', { extra: { temperature: 0 }, cache: true });
    expect(second.headers['x-cache']).toBe('HIT');
    const entry = await loggedRequest(gateway, requestIdOf(second));
    expect(entry).toMatchObject({ status: 200, cache_hit: true, cost_usd: 0, provider: 'openai', model: 'cached-model', attempts: [] });
  });

  it('logs a failover chain with every attempt in order', async () => {
    const reply = await chat('fo-alias');
    expect(reply.status, reply.text).toBe(200);
    const entry = await loggedRequest(gateway, requestIdOf(reply));
    expect(entry).toMatchObject({
      status: 200,
      virtual_model: 'fo-alias',
      model_requested: 'fo-alias',
      provider: 'openai-b',
      model: 'fo-500',
    });
    expect(entry.attempts).toEqual([
      { provider: 'openai', model: 'fo-500', status: 500, latency_ms: expect.any(Number), error_code: 'upstream_error' },
      { provider: 'openai-b', model: 'fo-500', status: 200, latency_ms: expect.any(Number), error_code: null },
    ]);
  });

  it('logs a 429 with the rule that refused it', async () => {
    expect((await chat('mock-model', { headers: { 'x-user-path': '/limited' } })).status).toBe(200);
    const refused = await chat('mock-model', { headers: { 'x-user-path': '/limited' } });
    expectEnvelope(refused, { status: 429, type: 'rate_limit_error', provider: 'ratelimit', code: 'rate_limit_exceeded' });
    const entry = await loggedRequest(gateway, requestIdOf(refused));
    expect(entry).toMatchObject({
      status: 429,
      error_type: 'rate_limit_error',
      error_code: 'rate_limit_exceeded',
      rate_limit: { scope: 'user_path', subject: '/limited', period: 'minute', kind: 'requests' },
      attempts: [],
      total_tokens: 0,
    });
    // The error's bodies are kept (REQUEST_LOG_BODIES=errors).
    expect(JSON.parse(entry.response_body ?? '{}')).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
  });

  it('logs a budget refusal', async () => {
    expect((await chat('mock-model', { headers: { 'x-user-path': '/broke' } })).status).toBe(200);
    const refused = await chat('mock-model', { headers: { 'x-user-path': '/broke' } });
    expectEnvelope(refused, { status: 429, type: 'rate_limit_error', provider: 'budget', code: 'budget_exceeded' });
    const entry = await loggedRequest(gateway, requestIdOf(refused));
    expect(entry).toMatchObject({ status: 429, error_code: 'budget_exceeded', rate_limit: null, user_path: '/broke' });
  });

  it('logs an authentication failure', async () => {
    const refused = await chat('mock-model', { token: 'wrong-key' });
    expectEnvelope(refused, { status: 401, type: 'authentication_error' });
    const entry = await loggedRequest(gateway, requestIdOf(refused));
    expect(entry).toMatchObject({ status: 401, error_type: 'authentication_error', api_key_id: null, endpoint: '/v1/chat/completions' });
  });

  it('logs a validation error with its request body kept and secrets redacted', async () => {
    const refused = await call(gateway, '/v1/chat/completions', {
      body: {
        model: 'mock-model',
        messages: 'not a list',
        api_key: 'sk-live-0123456789abcdefghij',
        metadata: { note: 'Bearer abcdefghijklmnop' },
      },
    });
    expect(refused.status).toBe(400);
    const entry = await loggedRequest(gateway, requestIdOf(refused));
    expect(entry).toMatchObject({ status: 400, error_type: 'invalid_request_error', model_requested: 'mock-model' });
    expect(entry.error_code).toBeTruthy();
    const kept = JSON.parse(entry.request_body ?? 'null') as Record<string, unknown>;
    expect(kept).toEqual({ model: 'mock-model', messages: 'not a list', api_key: '[REDACTED]', metadata: { note: 'Bearer [REDACTED]' } });
    expect(entry.request_body).not.toContain('abcdefghij');
  });

  it('logs an upstream 5xx', async () => {
    const failed = await chat('error-500');
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const entry = await loggedRequest(gateway, requestIdOf(failed));
    expect(entry).toMatchObject({ status: failed.status, error_type: 'provider_error', provider: 'openai', model: 'error-500' });
    expect(entry.attempts).toEqual([
      { provider: 'openai', model: 'error-500', status: 500, latency_ms: expect.any(Number), error_code: 'upstream_error' },
    ]);
  });

  it('logs a client that went away as 499', async () => {
    const controller = new AbortController();
    const requestId = `gone-${Date.now()}`;
    const pending = rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(MASTER_KEY), 'x-request-id': requestId },
      body: chatBody('hang'),
      signal: controller.signal,
    }).catch(() => null);
    await mocks[0]?.waitFor(
      (requests) => requests.some((recorded) => (recorded.body as { model?: string } | undefined)?.model === 'hang'),
      10_000,
    );
    controller.abort();
    await pending;
    const entry = await loggedRequest(gateway, requestId);
    expect(entry).toMatchObject({ status: 499, error_code: 'client_closed_request', model_requested: 'hang' });
  });

  it('logs a passthrough call by its path, without the query or its credentials', async () => {
    mocks[0]?.route('POST', '/things/*', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const reply = await call(gateway, '/p/openai/things/echo?key=secret-123&x=1', { body: { model: 'mock-model', input: 'hi' } });
    expect(reply.status, reply.text).toBe(200);
    const entry = await loggedRequest(gateway, requestIdOf(reply));
    expect(entry).toMatchObject({ endpoint: '/p/openai/things/echo', provider: 'openai', status: 200, model_requested: 'mock-model' });
    expect(JSON.stringify(entry)).not.toContain('secret-123');
  });

  it('lists newest first, filters, pages with the cursor, and refuses bad filters naming the parameter', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const reply = await chat('mock-model', { headers: { 'x-user-path': '/listing/sub' } });
      ids.push(requestIdOf(reply));
    }
    await loggedRequest(gateway, ids[2] ?? '');
    const first = await listRequests(gateway, { user_path: '/listing', limit: '2' });
    expect(first.requests.map((entry) => entry.id)).toEqual([ids[2], ids[1]]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await listRequests(gateway, { user_path: '/listing', limit: '2', cursor: first.next_cursor ?? '' });
    expect(second.requests.map((entry) => entry.id)).toEqual([ids[0]]);
    expect(second.next_cursor).toBeNull();
    const limited = await listRequests(gateway, { status: '429', code: 'rate_limit_exceeded' });
    expect(limited.requests.length).toBeGreaterThan(0);
    expect(limited.requests.every((entry) => entry.status === 429 && entry.error_code === 'rate_limit_exceeded')).toBe(true);
    const serverErrors = await listRequests(gateway, { status: '5xx', provider: 'openai' });
    expect(serverErrors.requests.every((entry) => entry.status >= 500)).toBe(true);
    const hits = await listRequests(gateway, { cache_hit: 'true', endpoint: '/v1/chat/completions' });
    expect(hits.requests.every((entry) => entry.cache_hit)).toBe(true);
    const byText = await listRequests(gateway, { q: ids[1] ?? '' });
    expect(byText.requests.map((entry) => entry.id)).toEqual([ids[1]]);
    for (const [param, value] of [
      ['status', '6xx'],
      ['from', 'yesterday'],
      ['limit', '501'],
      ['cursor', 'garbage'],
      ['cache_hit', 'maybe'],
      ['user_path', '/a/../b'],
    ]) {
      const reply = await call(gateway, `/admin/requests?${param}=${encodeURIComponent(value ?? '')}`);
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'invalid_parameter', param });
    }
    expectEnvelope(await call(gateway, '/admin/requests/no-such-request'), {
      status: 404,
      type: 'not_found_error',
      code: 'request_not_found',
    });
    expectEnvelope(await call(gateway, '/admin/requests', { token: null }), { status: 401, type: 'authentication_error' });
  });

  it('GET /admin/usage groups by api_key', async () => {
    const created = await callJson(gateway, '/admin/api-keys', 201, { body: { name: 'log-key' } });
    const reply = await call(gateway, '/v1/chat/completions', { token: created['key'] as string, body: chatBody('mock-model') });
    expect(reply.status).toBe(200);
    const entry = await loggedRequest(gateway, requestIdOf(reply));
    expect(entry.api_key_id).toBe(created['id']);
    // Usage records have their own batches: the entry being listed does not mean they are written.
    const rows = await eventually(async () => {
      const usage = await callJson(gateway, '/admin/usage?group_by=api_key', 200);
      const found = usage['rows'] as { key: string | null; requests: number }[];
      return found.some((row) => row.key === created['id']) ? found : undefined;
    }, 'the usage record of the keyed request');
    expect(rows.find((row) => row.key === created['id'])?.requests).toBe(1);
    expect(rows.some((row) => row.key === null)).toBe(true);
  });
  it('names the API key on entries; GET /admin/api-keys shows last use, requests and cost over a window', async () => {
    const created = await callJson(gateway, '/admin/api-keys', 201, { body: { name: 'analytics-key' } });
    const idle = await callJson(gateway, '/admin/api-keys', 201, { body: { name: 'idle-key' } });
    const token = created['key'] as string;
    const fresh = { 'cache-control': 'no-store' };
    const first = await call(gateway, '/v1/chat/completions', { token, body: chatBody('mock-model'), headers: fresh });
    const second = await call(gateway, '/v1/chat/completions', { token, body: chatBody('mock-model'), headers: fresh });
    expect([first.status, second.status]).toEqual([200, 200]);
    const entry = await loggedRequest(gateway, requestIdOf(second));
    expect(entry).toMatchObject({ api_key_id: created['id'], api_key_name: 'analytics-key' });
    const listed = await listRequests(gateway, { api_key_id: created['id'] as string });
    expect(listed.requests.map((one) => one.api_key_name)).toEqual(['analytics-key', 'analytics-key']);
    const keyList = async (query: string) => {
      const reply = await call(gateway, `/admin/api-keys${query}`);
      expect(reply.status, reply.text).toBe(200);
      return JSON.parse(reply.text) as Record<string, unknown>[];
    };
    const keys = await keyList('?window=24h');
    const used = keys.find((key) => key['id'] === created['id']);
    expect(used).toMatchObject({ requests: 2, cost_usd: 2, last_used_at: entry.time });
    expect(keys.find((key) => key['id'] === idle['id'])).toMatchObject({ requests: 0, cost_usd: 0, last_used_at: null });
    // The default window is 30 days.
    const byDefault = await keyList('');
    expect(byDefault.find((key) => key['id'] === created['id'])).toMatchObject({ requests: 2 });
    for (const window of ['0d', '2w', '400d', 'soon'])
      expectEnvelope(await call(gateway, `/admin/api-keys?window=${window}`), {
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_parameter',
        param: 'window',
      });
  });

  it('GET /admin/requests/stats: count, errors, error rate and p50/p95 latency per provider or model', async () => {
    const served = await chat('fo-alias');
    const refused = await chat('mock-model', { token: 'sk-wrong' });
    expect([served.status, refused.status]).toEqual([200, 401]);
    await loggedRequest(gateway, requestIdOf(served));
    await loggedRequest(gateway, requestIdOf(refused));
    const byProvider = await callJson(gateway, '/admin/requests/stats?group_by=provider', 200);
    expect(byProvider).toMatchObject({ group_by: 'provider', truncated: false, from: expect.any(String), to: expect.any(String) });
    const groups = byProvider['groups'] as Record<string, unknown>[];
    const openaiB = groups.find((group) => group['key'] === 'openai-b');
    expect(openaiB).toMatchObject({ requests: expect.any(Number), errors: expect.any(Number), error_rate: expect.any(Number) });
    expect(openaiB?.['p95_latency_ms']).toBeGreaterThanOrEqual(openaiB?.['p50_latency_ms'] as number);
    // Requests refused before a provider was chosen (the 429s, the 401) group under null.
    expect(groups.find((group) => group['key'] === null)?.['errors']).toBeGreaterThan(0);
    expect(byProvider['rows']).toBe(groups.reduce((sum, group) => sum + (group['requests'] as number), 0));
    const byModel = await callJson(gateway, '/admin/requests/stats?group_by=model&bucket=hour', 200);
    const models = byModel['groups'] as Record<string, unknown>[];
    expect(models.find((group) => group['key'] === 'fo-500')).toMatchObject({ bucket: expect.stringMatching(/T\d\d:00:00\.000Z$/) });
    for (const [param, value] of [
      ['group_by', 'user'],
      ['bucket', 'week'],
      ['from', 'yesterday'],
    ]) {
      const reply = await call(gateway, `/admin/requests/stats?${param}=${value}`);
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'invalid_parameter', param });
    }
  });
});
