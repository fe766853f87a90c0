import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startRedisServer, type RedisServerProcess } from '../../src/ratelimit/testing/redis-server.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, count, parseJson, type RawReply, statuses } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { expectRateLimited, findRule, listRules, putRule } from '../support/rate-limits.ts';
import { testServices } from '../support/services.ts';
import { createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { chatRequests, inFlightSampler } from '../support/upstream.ts';
import { eventually } from '../support/wait.ts';

// Issue 8: several gateway processes on one Redis (RATE_LIMITS_STORE=redis, and the response
// cache) and one PostgreSQL schema. Limits hold across replicas, a killed replica's slots come
// back after the lease TTL, admin changes reach every replica within seconds, and a Redis
// outage fails open. The Redis is a child of this test (it is stopped and restarted), never
// the shared one on 6379.

const burstCap = 30;
const concurrentCap = 3;
const leaseTtlSeconds = 2;
const gatewayYaml = `
rate_limits:
  user_paths:
    - path: /burst
      limits: [{ period: minute, max_requests: ${burstCap} }]
    - path: /cc
      limits: [{ period: concurrent, max_requests: ${concurrentCap} }]
    - path: /lease
      limits: [{ period: concurrent, max_requests: 2 }]
    - path: /outage
      limits: [{ period: hour, max_requests: 1000 }]
pricing:
  mock-model: { input_per_mtok: 1000000, output_per_mtok: 1000000 }
`;

/**
 * A chat completion on `userPath` that bypasses the (shared) response cache: a cache hit is
 * served before rate limits and would count nothing.
 */
function chatAt(gateway: GatewayProcess, userPath: string, model = 'openai/mock-model'): Promise<RawReply> {
  return call(gateway, '/v1/chat/completions', {
    headers: { 'x-user-path': userPath, 'cache-control': 'no-store' },
    body: chatBodyFor(model),
  });
}

/** A chat request whose outcome does not matter (it is cut by a kill or an abort). */
function background(gateway: GatewayProcess, userPath: string, model: string, signal: AbortSignal): void {
  void chatAt(gateway, userPath, model).catch(() => undefined);
  void signal;
}

async function readiness(gateway: GatewayProcess): Promise<{ status: number; body: Record<string, unknown> }> {
  const reply = await call(gateway, '/health/ready', { token: null });
  return { status: reply.status, body: parseJson(reply.text) };
}

/** Waits until the replica counts in Redis (it may start before its first connection settles). */
async function sharedCountersUp(gateway: GatewayProcess): Promise<void> {
  await eventually(
    async () => (rateLimitComponent((await readiness(gateway)).body)?.['status'] === 'up' ? true : undefined),
    'the replica counting in Redis',
    5_000,
  );
}

const unreachableLogs = (gateway: GatewayProcess): number =>
  gateway.logs().filter((line) => String(line['msg']).startsWith('rate limits: shared counter store unreachable')).length;

const rateLimitComponent = (body: Record<string, unknown>): Record<string, unknown> | undefined =>
  (body['components'] as Record<string, Record<string, unknown>> | undefined)?.['rate_limits'];

describe.skipIf(!testServices.postgres || !testServices.redisServer)('replicas on one Redis and one PostgreSQL', () => {
  let mock: MockUpstream;
  let redis: RedisServerProcess;
  let database: GatewayDatabase;
  let env: Record<string, string>;
  let replicas: GatewayProcess[] = [];
  const extra: GatewayProcess[] = [];
  const replica = (index: number): GatewayProcess => replicas[index % replicas.length] as GatewayProcess;

  beforeAll(async () => {
    [mock, redis, database] = await Promise.all([startMockUpstream(), startRedisServer(), createGatewayDatabase('postgresql')]);
    mock.setBehavior('slow-500', { kind: 'latency', ms: 500 });
    env = gatewayEnv(mock, {
      OPENAI_MODELS: 'mock-model,slow-500,hang',
      ...database.env,
      REDIS_URL: redis.url,
      RATE_LIMITS_STORE: 'redis',
      RATE_LIMITS_LEASE_TTL_SECONDS: String(leaseTtlSeconds),
      RELOAD_INTERVAL_SECONDS: '1',
      BUDGETS_REFRESH_INTERVAL_SECONDS: '1',
      RESPONSE_CACHE_ENABLED: 'true',
      RESPONSE_CACHE_STORE: 'redis',
      METRICS_ENABLED: 'true',
    });
    replicas = await Promise.all([0, 1, 2].map(() => startGateway({ env, configYaml: gatewayYaml })));
    for (const gateway of replicas) await sharedCountersUp(gateway);
  });

  afterAll(async () => {
    await Promise.all([...replicas, ...extra].map((gateway) => gateway.stop()));
    await mock?.close();
    await redis?.stop();
    await database?.dispose();
  });

  it(`admits exactly ${burstCap} of ${3 * burstCap} parallel requests spread over three replicas, and every admin list shows the shared count`, async () => {
    // Keep the burst inside one minute window (a boundary would let the sliding estimate admit one more).
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await sleep(60_500 - intoMinute);
    mock.reset();
    const replies = await Promise.all(Array.from({ length: 3 * burstCap }, (_, index) => chatAt(replica(index), `/burst/c${index % 5}`)));
    const codes = statuses(replies);
    expect(count(codes, 200), codes.join(',')).toBe(burstCap);
    expect(count(codes, 429), codes.join(',')).toBe(2 * burstCap);
    expect(chatRequests(mock)).toHaveLength(burstCap);
    // Every admission saw the shared count: remaining 29 .. 0, each exactly once.
    const remaining = replies
      .filter((reply) => reply.status === 200)
      .map((reply) => Number(reply.headers['x-ratelimit-remaining-requests']));
    expect(remaining.sort((left, right) => left - right)).toEqual(Array.from({ length: burstCap }, (_, index) => index));
    for (const reply of replies.filter((one) => one.status === 429)) {
      expectRateLimited(reply, `rate limit exceeded for /burst: minute request limit of ${burstCap} reached`);
    }
    for (const gateway of replicas) {
      expect(await findRule(gateway, 'user_path', '/burst', 'minute')).toMatchObject({ requests_used: burstCap, requests_remaining: 0 });
    }
  });

  it(`holds a concurrent = ${concurrentCap} rule across replicas at the upstream`, async () => {
    mock.reset();
    mock.setBehavior('slow-500', { kind: 'latency', ms: 500 });
    const sampler = inFlightSampler(mock);
    const replies = await Promise.all(Array.from({ length: 15 }, (_, index) => chatAt(replica(index), '/cc/app', 'openai/slow-500')));
    const maxInFlight = sampler.stop();
    const codes = statuses(replies);
    expect(count(codes, 200), codes.join(',')).toBe(concurrentCap);
    expect(count(codes, 429), codes.join(',')).toBe(15 - concurrentCap);
    expect(maxInFlight).toBe(concurrentCap);
    for (const reply of replies.filter((one) => one.status === 429)) {
      expectRateLimited(reply, `rate limit exceeded for /cc: concurrent request limit of ${concurrentCap} reached`, null);
    }
    for (const gateway of replicas) {
      await eventually(
        async () => ((await findRule(gateway, 'user_path', '/cc', 'concurrent'))?.in_flight === 0 ? true : undefined),
        'slots back',
      );
    }
  });

  it('shares the response cache: an answer stored through one replica is a HIT on another', async () => {
    const body = { model: 'openai/mock-model', messages: [{ role: 'user', content: `cached ${randomUUID()}` }] };
    const miss = await call(replica(0), '/v1/chat/completions', { body });
    expect(miss.status, miss.text).toBe(200);
    expect(miss.headers['x-cache']).toBeUndefined();
    const hit = await eventually(
      async () => {
        const reply = await call(replica(1), '/v1/chat/completions', { body });
        return reply.headers['x-cache'] === 'HIT' ? reply : undefined;
      },
      'a HIT on the second replica',
      3_000,
    );
    expect(hit.text).toBe(miss.text);
  });

  it('applies a rate-limit rule changed through one replica on the others within seconds', async () => {
    const key = { user_path: '/changed', limit_key: { period: 'minute' } };
    await putRule(replica(0), { ...key, max_requests: 1 });
    for (const gateway of replicas) {
      const seen = await eventually(() => findRule(gateway, 'user_path', '/changed', 'minute'), 'the rule on every replica', 4_000);
      expect(seen).toMatchObject({ max_requests: 1, origin: 'manual' });
    }
    expect((await chatAt(replica(2), '/changed')).status).toBe(0 + 200);
    expectRateLimited(await chatAt(replica(1), '/changed'), 'rate limit exceeded for /changed: minute request limit of 1 reached');
    // A cap edit on another replica keeps the shared counter.
    await putRule(replica(1), { ...key, max_requests: 3 });
    const edited = await eventually(
      async () => {
        const rule = await findRule(replica(0), 'user_path', '/changed', 'minute');
        return rule?.max_requests === 3 ? rule : undefined;
      },
      'the new cap on replica 0',
      4_000,
    );
    expect(edited.requests_used).toBe(1);
    expect((await call(replica(0), '/admin/rate-limits', { method: 'DELETE', body: key })).status).toBe(200);
    await eventually(
      async () => ((await findRule(replica(2), 'user_path', '/changed', 'minute')) === undefined ? true : undefined),
      'the rule gone from replica 2',
      4_000,
    );
    for (let attempt = 0; attempt < 3; attempt += 1) expect((await chatAt(replica(2), '/changed')).status).toBe(200);
  });

  it('applies API keys, virtual models and budgets changed through one replica on the others', async () => {
    const created = await call(replica(0), '/admin/api-keys', { body: { name: 'replicated' } });
    expect(created.status, created.text).toBe(201);
    const key = String(parseJson(created.text)['key']);
    await eventually(
      async () => ((await call(replica(1), '/v1/models', { token: key })).status === 200 ? true : undefined),
      'the key accepted by replica 1',
      5_000,
    );

    const alias = {
      name: `alias-${randomUUID().slice(0, 8)}`,
      strategy: 'failover',
      targets: [{ provider: 'openai', model: 'mock-model' }],
    };
    expect((await call(replica(0), '/admin/virtual-models', { method: 'PUT', body: alias })).status).toBe(200);
    await eventually(
      async () => ((await call(replica(2), '/v1/chat/completions', { body: chatBodyFor(alias.name) })).status === 200 ? true : undefined),
      'the alias served by replica 2',
      4_000,
    );
    expect((await call(replica(1), '/admin/virtual-models', { method: 'DELETE', body: { name: alias.name } })).status).toBe(200);
    await eventually(
      async () => ((await call(replica(2), '/v1/chat/completions', { body: chatBodyFor(alias.name) })).status === 404 ? true : undefined),
      'the alias gone from replica 2',
      4_000,
    );

    // A budget created on one replica, spent through another, refuses on a third.
    const budget = await call(replica(0), '/admin/budgets', { method: 'PUT', body: { user_path: '/spend', period: 'daily', amount: 1 } });
    expect([200, 201], budget.text).toContain(budget.status);
    await eventually(
      async () => (String((await call(replica(1), '/admin/budgets')).text).includes('"/spend"') ? true : undefined),
      'the budget on replica 1',
      4_000,
    );
    expect((await chatAt(replica(1), '/spend')).status).toBe(200);
    const refused = await eventually(
      async () => {
        const reply = await chatAt(replica(2), '/spend');
        return reply.status === 429 ? reply : undefined;
      },
      'the spend of replica 1 enforced on replica 2',
      5_000,
    );
    expectEnvelope(refused, { status: 429, type: 'rate_limit_error', code: 'budget_exceeded', provider: 'budget' });
  });

  it(`gives a killed replica's slots back after the lease TTL (${leaseTtlSeconds} s), and keeps them while it lives`, async () => {
    const victim = await startGateway({ env, configYaml: gatewayYaml });
    extra.push(victim);
    mock.reset();
    const controller = new AbortController();
    background(victim, '/lease', 'openai/hang', controller.signal);
    background(victim, '/lease', 'openai/hang', controller.signal);
    await mock.waitFor((requests) => requests.filter((recorded) => recorded.method === 'POST').length === 2, 3_000);
    // Held past the TTL: the victim renews its leases while the requests live.
    await sleep(leaseTtlSeconds * 1000 + 1_000);
    expect((await findRule(replica(0), 'user_path', '/lease', 'concurrent'))?.in_flight).toBe(2);
    expectRateLimited(await chatAt(replica(1), '/lease'), 'rate limit exceeded for /lease: concurrent request limit of 2 reached', null);

    await victim.stop('SIGKILL');
    const killedAt = Date.now();
    expect((await findRule(replica(0), 'user_path', '/lease', 'concurrent'))?.in_flight, 'slots outlive the kill until they expire').toBe(
      2,
    );
    await eventually(
      async () => ((await findRule(replica(2), 'user_path', '/lease', 'concurrent'))?.in_flight === 0 ? true : undefined),
      'the dead replica’s slots expired',
      leaseTtlSeconds * 1000 + 2_000,
    );
    // The last renewal came at most a third of the TTL before the kill: the slots come back
    // between 2/3 of the TTL and the TTL after it (plus the time to notice, on a busy machine).
    const elapsed = Date.now() - killedAt;
    expect(elapsed).toBeGreaterThanOrEqual(1_000);
    expect(elapsed).toBeLessThanOrEqual(leaseTtlSeconds * 1000 + 1_500);
    const codes = statuses(await Promise.all([chatAt(replica(0), '/lease'), chatAt(replica(1), '/lease')]));
    expect(codes).toEqual([200, 200]);
    controller.abort();
  });

  it('fails open while Redis is down (local counters, readiness and metrics say so) and counts in Redis again once it is back', async () => {
    expect(rateLimitComponent((await readiness(replica(0))).body)).toEqual({ status: 'up', store: 'redis', fail_mode: 'open' });
    const logsBefore = unreachableLogs(replica(2));
    await redis.stop();
    const during = await Promise.all(Array.from({ length: 9 }, (_, index) => chatAt(replica(index), '/outage')));
    for (const reply of during) {
      expect(reply.status, reply.text).toBe(200);
      expect(reply.headers['x-ratelimit-limit-requests']).toBe('1000');
    }
    const degraded = await readiness(replica(1));
    expect(degraded.status).toBe(200);
    expect(degraded.body['status']).toBe('degraded');
    expect(rateLimitComponent(degraded.body)).toEqual({ status: 'down', store: 'redis', fail_mode: 'open', counting: 'local' });
    const metrics = (await call(replica(0), '/metrics', { token: null })).text;
    expect(metrics).toMatch(/gateway_rate_limit_store_up\{store="redis",fail_mode="open"\} 0/);
    expect(metrics).toMatch(/gateway_rate_limit_local_admissions_total\{store="redis"\} [1-9]/);
    // Logged once per transition, however many requests met the outage.
    await chatAt(replica(2), '/outage');
    expect(unreachableLogs(replica(2)) - logsBefore).toBe(1);

    await redis.start();
    for (const gateway of replicas) await sharedCountersUp(gateway);
    // Redis came back empty: the shared count starts again from the requests made now.
    const after = await Promise.all(Array.from({ length: 6 }, (_, index) => chatAt(replica(index), '/outage')));
    expect(statuses(after)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const gateway of replicas) {
      expect(await findRule(gateway, 'user_path', '/outage', 'hour')).toMatchObject({ requests_used: 6 });
    }
    expect((await listRules(replica(0))).rate_limits.length).toBeGreaterThan(0);
    expect(String((await call(replica(1), '/metrics', { token: null })).text)).toMatch(
      /gateway_rate_limit_store_up\{store="redis",fail_mode="open"\} 1/,
    );
  });
});

function chatBodyFor(model: string): Record<string, unknown> {
  return { model, messages: [{ role: 'user', content: 'hello' }] };
}
