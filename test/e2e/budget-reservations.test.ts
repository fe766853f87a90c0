import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startRedisServer, type RedisServerProcess } from '../../src/ratelimit/testing/redis-server.ts';
import { spentOf } from '../support/admin.ts';
import { expectAnthropicEnvelope, expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { admitted, bearer, call, chatBody, type RawReply, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { chatRequests } from '../support/upstream.ts';
import { eventually } from '../support/wait.ts';

// Budgets that cannot be overshot (issue 15): each request reserves an estimate of its largest
// cost at admission, so 50 parallel requests against a $0.20 budget at $0.02 a request pass
// at most one estimate over it (11 requests), in one process and across replicas.
// The mock answers 12 prompt and 5 completion tokens: $0.012 + $0.008 = $0.02 at these prices.

const pricing = `
pricing:
  mock-model: { input_per_mtok: 1000, output_per_mtok: 1600 }
  mock-model-2: { input_per_mtok: 1000, output_per_mtok: 1600 }
`;
const requestCost = 0.02;
const amount = 0.2;

const chatAt = (gateway: GatewayProcess, userPath: string, extra: Record<string, unknown> = {}, signal?: AbortSignal): Promise<RawReply> =>
  rawRequest(`${gateway.url}/v1/chat/completions`, {
    headers: { ...bearer(), 'x-user-path': userPath },
    body: chatBody('openai/mock-model', { max_tokens: 5, ...extra }),
    ...(signal === undefined ? {} : { signal }),
  });

async function putBudget(gateway: GatewayProcess, userPath: string, budget: number): Promise<void> {
  const reply = await call(gateway, '/admin/budgets', { method: 'PUT', body: { user_path: userPath, period: 'daily', amount: budget } });
  expect([200, 201], reply.text).toContain(reply.status);
}

function expectBudgetExceeded(reply: RawReply): void {
  expectEnvelope(reply, { status: 429, type: 'rate_limit_error', code: 'budget_exceeded', provider: 'budget', param: null });
}

describe('budget reservations in one process', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.setBehavior('mock-model', { kind: 'latency', ms: 400 });
    gateway = await startGateway({
      env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model,error-500,slow-stream' }),
      configYaml: `${pricing}  error-500: { input_per_mtok: 1000, output_per_mtok: 1600 }
  slow-stream: { input_per_mtok: 1000, output_per_mtok: 1600 }
virtual_models:
  - name: fo-alias
    strategy: failover
    targets:
      - { provider: openai, model: error-500 }
      - { provider: openai, model: mock-model }
`,
      startTimeoutMs: 60_000,
    });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('admits at most 11 of 50 parallel $0.02 requests against a $0.20 budget', async () => {
    await putBudget(gateway, '/par', amount);
    const replies = await Promise.all(Array.from({ length: 50 }, (_, index) => chatAt(gateway, `/par/u${index % 7}`)));
    const count = admitted(replies);
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(11);
    for (const reply of replies) if (reply.status !== 200) expectBudgetExceeded(reply);
    // Every reservation is settled to the real cost once the responses end.
    await eventually(async () => (Math.abs((await spentOf(gateway, '/par')) - count * requestCost) < 1e-9 ? true : undefined), 'spend');
  });

  it('holds the estimate while a request runs and gives it back on errors and client aborts', async () => {
    await putBudget(gateway, '/hold', 1);
    // max_tokens 1,000,000 at $1,600/M: a $1,600 estimate, far over the $1 budget, held while it runs.
    const big = { max_tokens: 1_000_000 };
    const running = chatAt(gateway, '/hold', big);
    await eventually(async () => (chatRequests(mock).some((request) => !request.completed) ? true : undefined), 'the request upstream');
    const refused = await chatAt(gateway, '/hold');
    expectBudgetExceeded(refused);
    expect(refused.headers['retry-after']).toBe('1'); // held, not spent: it may free up at once
    expect((await running).status).toBe(200);
    expect((await chatAt(gateway, '/hold')).status).toBe(200);

    // An upstream error releases the reservation.
    const failed = await call(gateway, '/v1/chat/completions', {
      headers: { 'x-user-path': '/hold' },
      body: chatBody('openai/error-500', big),
    });
    expect(failed.status).toBe(500);
    expect((await chatAt(gateway, '/hold')).status).toBe(200);

    // A client that leaves releases it too.
    const controller = new AbortController();
    const aborted = chatAt(gateway, '/hold', big, controller.signal).catch(() => null);
    await eventually(
      async () => (chatRequests(mock).some((request) => !request.completed && !request.aborted) ? true : undefined),
      'upstream',
    );
    controller.abort();
    await aborted;
    await eventually(async () => ((await chatAt(gateway, '/hold')).status === 200 ? true : undefined), 'the hold released after the abort');

    // A stream cut by its client mid-way releases it as well.
    const streamAbort = new AbortController();
    const stream = rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'x-user-path': '/hold' },
      body: chatBody('openai/slow-stream', { ...big, stream: true }),
      signal: streamAbort.signal,
    }).catch(() => null);
    await eventually(
      async () => (chatRequests(mock).some((request) => !request.completed && !request.aborted) ? true : undefined),
      'stream',
    );
    expectBudgetExceeded(await chatAt(gateway, '/hold'));
    streamAbort.abort();
    await stream;
    await eventually(async () => ((await chatAt(gateway, '/hold')).status === 200 ? true : undefined), 'the hold released after the cut');
  });

  it('holds the estimate of /v1/messages at admission, as chat does', async () => {
    await putBudget(gateway, '/msg', 1);
    const messagesAt = (maxTokens: number): Promise<RawReply> =>
      rawRequest(`${gateway.url}/v1/messages`, {
        headers: { ...bearer(), 'x-user-path': '/msg' },
        body: { model: 'openai/mock-model', max_tokens: maxTokens, messages: [{ role: 'user', content: 'Say hello' }] },
      });
    // max_tokens 1,000,000 at $1,600/M: a $1,600 estimate, far over the $1 budget, held while it runs.
    const running = messagesAt(1_000_000);
    await eventually(async () => (chatRequests(mock).some((request) => !request.completed) ? true : undefined), 'the request upstream');
    const chatRefused = await chatAt(gateway, '/msg');
    expectBudgetExceeded(chatRefused);
    expect(chatRefused.headers['retry-after']).toBe('1'); // held, not spent
    const refused = await messagesAt(5);
    const envelope = expectAnthropicEnvelope(refused, 429, 'rate_limit_error');
    expect(envelope.error.message).toBe((JSON.parse(chatRefused.text) as { error: { message: string } }).error.message);
    expect(refused.headers['retry-after']).toBe('1');
    expect((await running).status).toBe(200);
    // The hold is given back once the answer ended; the request paid its real cost.
    expect((await messagesAt(5)).status).toBe(200);
    await eventually(async () => (Math.abs((await spentOf(gateway, '/msg')) - 2 * requestCost) < 1e-9 ? true : undefined), 'spend');
  });

  it('moves the reservation to the target that executes after a failover, and releases it', async () => {
    // Each attempt reserves about $0.03; $0.05 leaves room for one reservation, not for a leaked one plus the spend.
    await putBudget(gateway, '/fo', 0.05);
    const failedOver = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'x-user-path': '/fo' },
      body: chatBody('fo-alias', { max_tokens: 5 }),
    });
    expect(failedOver.status, failedOver.text).toBe(200);
    // The executed target paid its real cost, the failed attempt nothing.
    await eventually(async () => (Math.abs((await spentOf(gateway, '/fo')) - requestCost) < 1e-9 ? true : undefined), 'spend of $0.02');
    // Nothing is held any more: $0.02 spent plus a new $0.03 reservation fits under $0.05.
    expect((await chatAt(gateway, '/fo')).status).toBe(200);
  });
});

describe('budget reservations across two replicas (Redis + PostgreSQL)', () => {
  let mock: MockUpstream;
  let redis: RedisServerProcess;
  let database: GatewayDatabase;
  let replicas: GatewayProcess[] = [];

  beforeAll(async () => {
    [mock, redis, database] = await Promise.all([startMockUpstream(), startRedisServer(), createGatewayDatabase('postgresql')]);
    mock.setBehavior('mock-model', { kind: 'latency', ms: 400 });
    const env = gatewayEnv(mock, {
      OPENAI_MODELS: 'mock-model',
      ...database.env,
      REDIS_URL: redis.url,
      RELOAD_INTERVAL_SECONDS: '1',
      BUDGETS_REFRESH_INTERVAL_SECONDS: '1',
    });
    replicas = await Promise.all([0, 1].map(() => startGateway({ env, configYaml: pricing, startTimeoutMs: 60_000 })));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(replicas.map((gateway) => gateway.stop()));
    await mock?.close();
    await redis?.stop();
    await database?.dispose();
  });

  it('admits at most 11 of 50 parallel $0.02 requests spread over both replicas', async () => {
    const [first, second] = replicas as [GatewayProcess, GatewayProcess];
    await putBudget(first, '/both', amount);
    await eventually(async () => (Number.isFinite(await spentOf(second, '/both')) ? true : undefined), 'the rule on the second replica');
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, index) => chatAt(index % 2 === 0 ? first : second, `/both/u${index}`)),
    );
    const count = admitted(replies);
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(11);
    for (const reply of replies) if (reply.status !== 200) expectBudgetExceeded(reply);
    // A second wave after the first settled: the spend so far counts on both replicas at once.
    const again = await Promise.all(Array.from({ length: 20 }, (_, index) => chatAt(index % 2 === 0 ? first : second, `/both/v${index}`)));
    expect(count + admitted(again)).toBeLessThanOrEqual(11);
  });

  it('holds the same bound for passthrough calls: at most 11 of 50 parallel $0.02 calls over both replicas', async () => {
    const [first, second] = replicas as [GatewayProcess, GatewayProcess];
    await putBudget(first, '/pt-both', amount);
    await eventually(async () => (Number.isFinite(await spentOf(second, '/pt-both')) ? true : undefined), 'the rule on the second replica');
    const relayed = (gateway: GatewayProcess, userPath: string): Promise<RawReply> =>
      rawRequest(`${gateway.url}/p/openai/v1/chat/completions`, {
        headers: { ...bearer(), 'x-user-path': userPath },
        body: chatBody('mock-model', { max_tokens: 5 }),
      });
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, index) => relayed(index % 2 === 0 ? first : second, `/pt-both/u${index}`)),
    );
    const count = admitted(replies);
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(11);
    for (const reply of replies) if (reply.status !== 200) expectBudgetExceeded(reply);
    await eventually(async () => (Math.abs((await spentOf(first, '/pt-both')) - count * requestCost) < 1e-9 ? true : undefined), 'spend');
  });

  it('keeps serving while Redis is down (each replica decides alone) and says so once', async () => {
    const [first, second] = replicas as [GatewayProcess, GatewayProcess];
    await putBudget(first, '/down', 100);
    await eventually(async () => (Number.isFinite(await spentOf(second, '/down')) ? true : undefined), 'the rule on the second replica');
    await redis.stop();
    try {
      const replies = await Promise.all(Array.from({ length: 6 }, (_, index) => chatAt(index % 2 === 0 ? first : second, '/down')));
      expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200, 200]);
      const warnings = (): number => first.logs().filter((line) => String(line['msg']).startsWith('budgets: Redis unreachable')).length;
      await expect.poll(warnings, { timeout: 5_000 }).toBe(1);
    } finally {
      await redis.start();
    }
  });
});
