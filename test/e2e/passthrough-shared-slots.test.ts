import { setTimeout as sleep } from 'node:timers/promises';

import { Redis } from 'ioredis';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { testServices } from '../support/services.ts';
import { eventually } from '../support/wait.ts';
import { startRedisServer, type RedisServerProcess } from '../../src/ratelimit/testing/redis-server.ts';

// With the counters in Redis, admitting a request takes a round trip: a client
// that leaves during it must not keep the concurrency slot it was being given.

async function passthrough(gateway: GatewayProcess, signal?: AbortSignal): Promise<number> {
  const response = await request(`${gateway.url}/p/openai/things/x`, {
    headers: { authorization: `Bearer ${MASTER_KEY}`, 'x-user-path': '/slots' },
    signal,
  });
  await response.body.dump();
  return response.statusCode;
}

async function chat(gateway: GatewayProcess, signal?: AbortSignal): Promise<number> {
  const response = await request(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${MASTER_KEY}`, 'x-user-path': '/slots', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'hi' }] }),
    signal,
  });
  await response.body.dump();
  return response.statusCode;
}

/** Log lines of the store falling back to local counters (a run that hit one proves nothing). */
const fallbacks = (gateway: GatewayProcess): number =>
  gateway.logs().filter((line) => String(line['msg']).startsWith('rate limits: shared counter store unreachable')).length;

/** Waits until the gateway counts in Redis again (after a fallback, it probes before going back). */
async function countingInRedis(gateway: GatewayProcess): Promise<void> {
  await eventually(
    async () => {
      const response = await request(`${gateway.url}/health/ready`);
      const body = (await response.body.json()) as { components?: Record<string, { status?: string }> };
      return body.components?.['rate_limits']?.status === 'up' ? true : undefined;
    },
    'the gateway counting in Redis',
    5_000,
  );
}

describe.skipIf(!testServices.redisServer)('passthrough concurrency slots on shared (Redis) counters', () => {
  let mock: MockUpstream;
  let redis: RedisServerProcess;
  let admin: Redis;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    [mock, redis] = await Promise.all([startMockUpstream(), startRedisServer()]);
    mock.route('GET', '/things*', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('ok');
    });
    admin = new Redis(redis.url);
    const configYaml = `
providers:
  openai: { type: openai, api_key: ${UPSTREAM_KEY}, base_url: "${mock.url}", models: [mock-model] }
rate_limits:
  user_paths:
    - path: /slots
      limits: [{ period: concurrent, max_requests: 1 }]
`;
    gateway = await startGateway({ env: { MASTER_KEY, REDIS_URL: redis.url, RATE_LIMITS_STORE: 'redis' }, configYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    admin?.disconnect();
    await redis?.stop();
    await mock?.close();
  });

  for (const [name, call] of [
    ['passthrough', passthrough],
    ['chat completions', chat],
  ] as const) {
    it(`${name}: gives the slot back when the client leaves while Redis admits it`, async () => {
      await countingInRedis(gateway);
      expect(await call(gateway)).toBe(200);
      const before = fallbacks(gateway);
      // Redis holds every command for 80 ms (+ up to 100 ms of its timer; under the store's 200 ms deadline): the client leaves meanwhile.
      await admin.call('CLIENT', 'PAUSE', '80', 'ALL');
      const controller = new AbortController();
      const left = call(gateway, controller.signal).catch(() => 'aborted');
      await sleep(30);
      controller.abort();
      expect(await left).toBe('aborted');
      await sleep(400);
      expect(await call(gateway)).toBe(200);
      // Counted in Redis all along: a fallback to local counters would hide a leaked slot.
      expect(fallbacks(gateway)).toBe(before);
    });
  }
});
