import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.ts';
import { rejected } from '../testing/thrown.ts';
import type { AdmissionResult } from './counter-store.ts';
import { connectRedisForCounters, RedisCounterStore } from './redis-counter-store.ts';
import { ResilientCounterStore, type RateLimitFailMode } from './resilient-counter-store.ts';
import type { RateLimitRule } from './rules.ts';
import { testServices } from '../../test/support/services.ts';
import { startRedisServer, type RedisServerProcess } from './testing/redis-server.ts';

// The failure policy against a Redis of the test's own (a redis-server child it kills and
// restarts), never the shared one on 6379.

const hold = { holdSlot: true, enforceTokens: true };
const rule = (id: string, periodSeconds: number, maxRequests: number): RateLimitRule => ({
  id,
  counterKey: `${id}#config`,
  scope: 'user_path',
  subject: `/${id}`,
  periodSeconds,
  maxRequests,
  maxTokens: null,
  origin: 'config',
  createdAt: 0,
  updatedAt: 0,
});

let redis: RedisServerProcess;
const stores: ResilientCounterStore[] = [];

beforeAll(async () => {
  if (testServices.redisServer) redis = await startRedisServer();
});

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await redis?.stop();
});

async function resilient(failMode: RateLimitFailMode): Promise<{ store: ResilientCounterStore; logs: Array<Record<string, unknown>> }> {
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) });
  const client = await connectRedisForCounters({ url: redis.url });
  const shared = new RedisCounterStore({ client, prefix: `resilient:${failMode}:{t}:`, commandTimeoutMs: 200 });
  const store = new ResilientCounterStore({
    shared,
    store: 'redis',
    failMode,
    logger,
    availableAtStart: client.status === 'ready',
    probeIntervalMs: 100,
  });
  stores.push(store);
  return { store, logs };
}

const admitted = (result: AdmissionResult): boolean => result.admitted;

async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(20);
  }
}

describe.skipIf(!testServices.redisServer)('ResilientCounterStore', () => {
  it('fails open to local counters while Redis is down, logs each transition once, and goes back', async () => {
    const { store, logs } = await resilient('open');
    const minute = rule('open', 60, 3);
    const slots = rule('open-slots', 0, 5);
    const now = Date.now();
    expect(admitted(await store.admit([minute], hold, now))).toBe(true);
    expect(store.status()).toMatchObject({ available: true, localAdmissions: 0 });
    const sharedSlot = await store.admit([slots], hold, now);

    await redis.stop();
    const local = [];
    for (let index = 0; index < 5; index += 1) local.push(admitted(await store.admit([minute], hold, now)));
    // Local counters start empty: three more fit under the cap of 3, then the cap holds locally.
    expect(local).toEqual([true, true, true, false, false]);
    expect(store.status()).toMatchObject({ available: false, failMode: 'open', localAdmissions: 5 });
    // Releasing a slot held in Redis while it is down neither throws nor touches local counters.
    await store.release([slots], sharedSlot.admitted ? sharedSlot.lease : undefined);
    expect((await store.counts([minute], now))[0]?.requestsUsed).toBe(3);
    const localSlot = await store.admit([slots], hold, now);
    expect((await store.counts([slots], now))[0]?.inFlight).toBe(1);

    await redis.start();
    await until(() => store.status().available, 'the store probes Redis and goes back to it');
    // Redis restarted empty: counting resumes there.
    const [afterRestart] = await store.counts([minute], now);
    expect(afterRestart?.requestsUsed).toBe(0);
    expect(admitted(await store.admit([minute], hold, now))).toBe(true);
    expect((await store.counts([minute], now))[0]?.requestsUsed).toBe(1);
    // A slot taken locally goes back to the local counters, not to Redis.
    await store.release([slots], localSlot.admitted ? localSlot.lease : undefined);
    expect(store.status().localAdmissions).toBe(6);

    const warnings = logs.filter((line) => line['level'] === 40);
    const recoveries = logs.filter((line) => String(line['msg']).includes('reachable again'));
    expect(warnings.map((line) => line['msg'])).toEqual(['rate limits: shared counter store unreachable, counting locally (fail-open)']);
    expect(recoveries).toHaveLength(1);
  });

  it('fails closed with 503 rate_limit_store_unavailable when told to, and never fails a release', async () => {
    const { store } = await resilient('closed');
    const minute = rule('closed', 60, 100);
    const slots = rule('closed-slots', 0, 5);
    const held = await store.admit([slots], hold, Date.now());
    expect(held.admitted).toBe(true);

    await redis.stop();
    const error = await rejected(GatewayError, store.admit([minute], hold, Date.now()));
    expect([error.status, error.type, error.code, error.provider]).toEqual([
      503,
      'provider_error',
      'rate_limit_store_unavailable',
      'gateway',
    ]);
    await store.release([slots], held.admitted ? held.lease : undefined);
    await store.addTokens([minute], 10, Date.now());
    // A capacity probe only steers routing: the admission answers the 503.
    expect(await store.hasCapacity([minute], true, Date.now())).toBe(true);
    await expect(store.counts([minute], Date.now())).rejects.toMatchObject({ code: 'rate_limit_store_unavailable' });
    expect(store.status()).toMatchObject({ available: false, failMode: 'closed', localAdmissions: 0 });

    await redis.start();
    await until(() => store.status().available, 'the store goes back to Redis');
    expect(admitted(await store.admit([minute], hold, Date.now()))).toBe(true);
  });

  it('starts degraded when Redis is down at startup, then finds it', async () => {
    await redis.stop();
    const { store } = await resilient('open');
    expect(store.status().available).toBe(false);
    expect(admitted(await store.admit([rule('late', 60, 1)], hold, Date.now()))).toBe(true);
    await redis.start();
    await until(() => store.status().available, 'Redis found after startup');
    expect((await store.check()).available).toBe(true);
  });
});
