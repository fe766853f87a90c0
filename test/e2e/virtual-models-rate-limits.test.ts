import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, callJson, listModels, type RawReply } from '../support/http.ts';
import type { MockUpstream } from '../support/mock-upstream.ts';
import { rateLimitHeaderNames, ruleOf } from '../support/rate-limits.ts';
import { chat, chatCount, closeAll, instancesEnv, servedBy, startMocks } from '../support/virtual-models.ts';

// SEED-SPEC errors 2-4 and CONTRACT section 8: a provider or model rule that is saturated
// makes its target unavailable (skipped without a call); when every target is saturated the
// client gets the honest 429 of the first target; user-path rules always answer 429; requests
// and tokens are charged to the target that executed. Hourly windows keep a window boundary
// (which relaxes the sliding estimate) out of these few seconds.

/** Asserts the 429 of a rate-limit rejection (CONTRACT section 6); returns its message. */
function expectRateLimited(reply: RawReply, subject: string): string {
  const error = expectEnvelope(reply, {
    status: 429,
    type: 'rate_limit_error',
    code: 'rate_limit_exceeded',
    provider: 'ratelimit',
    param: null,
  });
  expect(error.message).toContain(subject);
  const retryAfter = Number(reply.headers['retry-after']);
  expect(Number.isInteger(retryAfter), String(reply.headers['retry-after'])).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(3600);
  return error.message;
}

describe('virtual models and rate limits declared in the environment', () => {
  let mocks: MockUpstream[];
  let a: MockUpstream;
  let b: MockUpstream;
  let c: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(3);
    [a, b, c] = mocks as [MockUpstream, MockUpstream, MockUpstream];
    const env = instancesEnv(mocks, ['mock-model'], {
      SET_PROVIDER_RATE_LIMIT_OPENAI: 'rph=1',
      SET_PROVIDER_RATE_LIMIT_OPENAI_B: 'rph=4',
      SET_RATE_LIMIT_LIMITED: 'rph=1',
    });
    const configYaml = `
virtual_models:
  - name: saturating
    strategy: failover
    targets:
      - { provider: openai, model: mock-model }
      - { provider: openai-b, model: mock-model }
  - name: spare
    targets:
      - { provider: openai-c, model: mock-model }
`;
    gateway = await startGateway({ env, configYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await closeAll(mocks ?? []);
  });

  it('a saturated provider target is skipped: the next target serves with no error and A is not called again', async () => {
    expect(await servedBy(gateway, 'saturating')).toBe('openai'); // A's one request of the hour
    expect(chatCount(a)).toBe(1);
    for (let index = 0; index < 4; index += 1) expect(await servedBy(gateway, 'saturating')).toBe('openai-b');
    expect(chatCount(a)).toBe(1);
    expect(chatCount(b)).toBe(4);
    // Each request was charged to the provider that executed it.
    expect((await ruleOf(gateway, 'provider', 'openai')).requests_used).toBe(1);
    expect((await ruleOf(gateway, 'provider', 'openai-b')).requests_used).toBe(4);
  });

  it('with every target saturated the alias answers 429 with Retry-After and calls no upstream', async () => {
    const reply = await chat(gateway, 'saturating');
    // The alias resolves to its first target, whose rule answers (SEED-SPEC errors 4).
    expectRateLimited(reply, 'provider openai');
    expect(chatCount(a)).toBe(1);
    expect(chatCount(b)).toBe(4);
    expect((await ruleOf(gateway, 'provider', 'openai')).requests_used).toBe(1);
    expect((await ruleOf(gateway, 'provider', 'openai-b')).requests_used).toBe(4);
  });

  it('the saturated alias stays listed in GET /v1/models', async () => {
    const ids = (await listModels(gateway)).map((model) => model.id);
    expect(ids).toContain('saturating');
    expect(ids).toContain('spare');
  });

  it('GET /admin/models shows the saturated targets as unavailable', async () => {
    const reply = await call(gateway, '/admin/models');
    expect(reply.status, reply.text).toBe(200);
    const rows = JSON.parse(reply.text) as Array<Record<string, unknown>>;
    expect(Array.isArray(rows)).toBe(true);
    const virtual = rows.find((row) => row['id'] === 'saturating');
    expect(virtual).toMatchObject({ kind: 'virtual', strategy: 'failover', available: false });
    expect(virtual?.['targets']).toEqual([
      expect.objectContaining({ provider: 'openai', model: 'mock-model', available: false }),
      expect.objectContaining({ provider: 'openai-b', model: 'mock-model', available: false }),
    ]);
    expect(rows.find((row) => row['id'] === 'openai/mock-model')).toMatchObject({ kind: 'concrete', available: false });
    expect(rows.find((row) => row['id'] === 'openai-c/mock-model')).toMatchObject({ kind: 'concrete', available: true });
  });

  it('a direct request to a saturated provider answers 429 and the upstream is not called', async () => {
    expectRateLimited(await chat(gateway, 'openai/mock-model'), 'provider openai');
    expectRateLimited(await chat(gateway, 'openai-b/mock-model'), 'provider openai-b');
    expect(chatCount(a)).toBe(1);
    expect(chatCount(b)).toBe(4);
  });

  it('a user-path rule breach answers 429 even though the targets have capacity', async () => {
    const headers = { 'x-user-path': '/limited/app' };
    expect(await servedBy(gateway, 'spare', { headers })).toBe('openai-c');
    const reply = await chat(gateway, 'spare', { headers });
    const message = expectRateLimited(reply, '/limited');
    expect(message).toContain('hour');
    expect(rateLimitHeaderNames(reply).length).toBeGreaterThan(0);
    expect(chatCount(c)).toBe(1);
    // Other paths still reach the same target.
    expect(await servedBy(gateway, 'spare', { headers: { 'x-user-path': '/other' } })).toBe('openai-c');
    expect(chatCount(c)).toBe(2);
  });
});

describe('virtual models and rate limits set through the admin API', () => {
  let mocks: MockUpstream[];
  let a: MockUpstream;
  let b: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(2);
    [a, b] = mocks as [MockUpstream, MockUpstream];
    const configYaml = `
virtual_models:
  - name: balanced
    strategy: round_robin
    targets:
      - { provider: openai, model: mock-model }
      - { provider: openai-b, model: mock-model }
  - name: tokens
    strategy: failover
    targets:
      - { provider: openai, model: tok-model }
      - { provider: openai-b, model: tok-model }
  - name: model-ruled
    strategy: failover
    targets:
      - { provider: openai, model: mock-model-2 }
      - { provider: openai-b, model: mock-model-2 }
`;
    gateway = await startGateway({ env: instancesEnv(mocks, ['mock-model', 'mock-model-2', 'tok-model']), configYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await closeAll(mocks ?? []);
  });

  async function putRule(body: Record<string, unknown>): Promise<void> {
    await callJson(gateway, '/admin/rate-limits', 200, { method: 'PUT', body });
  }

  it('tokens are charged to the provider that executed after a failover, not to the failed one', async () => {
    await putRule({ scope: 'provider', subject: 'openai', limit_key: { period: 'day' }, max_requests: 1_000, max_tokens: 100_000 });
    await putRule({ scope: 'provider', subject: 'openai-b', limit_key: { period: 'day' }, max_requests: 1_000, max_tokens: 100_000 });
    a.setBehavior('tok-model', { kind: 'error', status: 500 });
    expect(await servedBy(gateway, 'tokens')).toBe('openai-b');
    expect(chatCount(a, 'tok-model')).toBe(1);
    // Tokens are counted when the response completes (17 from the mock's usage).
    const served = await ruleOf(gateway, 'provider', 'openai-b');
    expect(served.tokens_used).toBe(17);
    expect(served.requests_used).toBe(1);
    const failed = await ruleOf(gateway, 'provider', 'openai');
    expect(failed.tokens_used).toBe(0);
    // The failed attempt did execute against A, so A's request counter has it (ADR 7).
    expect(failed.requests_used).toBe(1);
  });

  it('a user-path concurrency slot stays held while a failover attempt runs', async () => {
    await putRule({ user_path: '/conc', limit_key: { period: 'concurrent' }, max_requests: 1 });
    a.setBehavior('tok-model', { kind: 'error', status: 500 });
    b.setBehavior('tok-model', { kind: 'latency', ms: 800 });
    const headers = { 'x-user-path': '/conc' };
    const running = chat(gateway, 'tokens', { headers });
    await b.waitFor((requests) => requests.filter((recorded) => (recorded.body as { model?: unknown }).model === 'tok-model').length === 2);
    // The first request is in flight on B (after failing on A): its slot on /conc is held.
    const inFlight = (await ruleOf(gateway, 'user_path', '/conc')).in_flight;
    const second = await chat(gateway, 'openai-b/mock-model', { headers });
    const first = await running;
    b.setBehavior('tok-model', { kind: 'ok' });
    expect(first.status, first.text).toBe(200);
    expect.soft(inFlight, 'in_flight of /conc during the failover attempt').toBe(1);
    expectRateLimited(second, '/conc');
  });

  it('a provider rule added with PUT takes round_robin traffic off the saturated target', async () => {
    await putRule({ scope: 'provider', subject: 'openai', limit_key: { period: 'hour' }, max_requests: 2 });
    const before = { a: chatCount(a, 'mock-model'), b: chatCount(b, 'mock-model') };
    const usedOnB = (await ruleOf(gateway, 'provider', 'openai-b', 'day')).requests_used;
    const served: string[] = [];
    for (let index = 0; index < 10; index += 1) served.push(await servedBy(gateway, 'balanced'));
    expect(served.filter((provider) => provider === 'openai')).toHaveLength(2);
    expect(served.filter((provider) => provider === 'openai-b')).toHaveLength(8);
    expect(chatCount(a, 'mock-model') - before.a).toBe(2);
    expect(chatCount(b, 'mock-model') - before.b).toBe(8);
    // Once saturated, A is never called again: the last requests all went to B.
    expect(served.slice(-6)).toEqual(Array.from({ length: 6 }, () => 'openai-b'));
    expect((await ruleOf(gateway, 'provider', 'openai', 'hour')).requests_used).toBe(2);
    expect((await ruleOf(gateway, 'provider', 'openai-b', 'day')).requests_used).toBe(usedOnB + 8);
  });

  it('a saturated model rule (qualified subject) sets that target aside; the same model elsewhere still serves', async () => {
    await putRule({ scope: 'model', subject: 'openai-b/mock-model-2', limit_key: { period: 'hour' }, max_requests: 1 });
    // A is saturated by its provider rule, so the alias goes to B, whose model rule allows one.
    expect(await servedBy(gateway, 'model-ruled')).toBe('openai-b');
    const reply = await chat(gateway, 'model-ruled');
    // Every target saturated: the first declared target (A, provider rule) answers.
    expectRateLimited(reply, 'provider openai');
    expectRateLimited(await chat(gateway, 'openai-b/mock-model-2'), 'model openai-b/mock-model-2');
    expect(chatCount(a, 'mock-model-2')).toBe(0);
    expect(chatCount(b, 'mock-model-2')).toBe(1);
    // The model rule covers only that model: B still serves mock-model.
    expect(await servedBy(gateway, 'openai-b/mock-model')).toBe('openai-b');
  });
});
