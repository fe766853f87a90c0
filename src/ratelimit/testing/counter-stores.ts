import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { RateLimitCounterStore } from '../counter-store.ts';
import { MemoryCounterStore } from '../memory-counter-store.ts';
import { RedisCounterStore } from '../redis-counter-store.ts';
import { ResilientCounterStore } from '../resilient-counter-store.ts';
import { testRedisUrl, testServices } from '../../../test/support/services.ts';

/** The Redis every suite uses (REDIS_URL_TEST); in CI a suite fails when it does not answer. */
export const TEST_REDIS_URL = testRedisUrl;

/** One kind of counter store for behavioural suites run against every store. */
export interface CounterStoreKind {
  readonly name: string;
  /** A fresh, empty store (a key prefix of its own for Redis). */
  create(): Promise<RateLimitCounterStore>;
  /** Deletes what the kind's stores left behind and closes connections. */
  dispose(): Promise<void>;
}

const run = randomBytes(4).toString('hex');
let client: Redis | null = null;
let created = 0;

function redisClient(): Redis {
  if (client === null) {
    client = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: false });
    // Every store listens for reconnections on the one client.
    client.setMaxListeners(0);
  }
  return client;
}

/** A store on the shared test Redis under a prefix no other store or run uses. */
export function freshRedisStore(leaseTtlMs?: number): RedisCounterStore {
  return new RedisCounterStore({ client: redisClient(), prefix: freshRedisPrefix(), leaseTtlMs });
}

/** A key prefix no other store or run uses (cleaned up by `disposeRedisStores`). */
export function freshRedisPrefix(): string {
  created += 1;
  return `test:ratelimit:${run}:${created}:{t}:`;
}

/** Removes every key of this run's stores and closes the client. */
export async function disposeRedisStores(): Promise<void> {
  if (client === null) return;
  const redis = client;
  client = null;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `test:ratelimit:${run}:*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  await redis.quit();
}

const memoryKind: CounterStoreKind = { name: 'memory', create: async () => new MemoryCounterStore(), dispose: async () => {} };

/** Memory, and the Redis kinds unless Redis is missing outside CI (the global setup said so). */
export const counterStoreKinds: readonly CounterStoreKind[] = !testServices.redis
  ? [memoryKind]
  : [
      memoryKind,
      { name: 'redis', create: async () => freshRedisStore(), dispose: disposeRedisStores },
      {
        name: 'redis, fail-open',
        create: async () =>
          new ResilientCounterStore({
            shared: freshRedisStore(),
            store: 'redis',
            failMode: 'open',
            logger: pino({ level: 'silent' }),
            availableAtStart: true,
          }),
        dispose: disposeRedisStores,
      },
    ];
