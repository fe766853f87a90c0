import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCacheStore } from './memory-cache-store.ts';
import { createRedisCacheStore } from './redis-cache-store.ts';
import type { CachedResponse, ResponseCacheStore } from './response-cache.ts';
import { testServices } from '../../test/support/services.ts';
import { capturingLogger, defaultTestRedisUrl, openRedisTestHarness, sleep } from './testing/redis-test-support.ts';
import type { RedisTestHarness } from './testing/redis-test-support.ts';

const redisUrl = process.env.REDIS_URL_TEST ?? defaultTestRedisUrl;

let harness: RedisTestHarness;

beforeAll(async () => {
  if (testServices.redis) harness = await openRedisTestHarness(redisUrl);
});

afterAll(async () => {
  await harness?.dispose();
});

const implementations: { name: string; open: () => Promise<ResponseCacheStore> }[] = [
  { name: 'memory', open: async () => new MemoryCacheStore({ maxEntries: 100, maxBytes: 1_000_000 }) },
  ...(testServices.redis
    ? [{ name: 'redis', open: () => createRedisCacheStore({ url: redisUrl, prefix: harness.prefix, logger: capturingLogger().logger }) }]
    : []),
];

function response(kind: CachedResponse['kind'], body: string): CachedResponse {
  return { kind, body, provider: 'anthropic-main', model: 'claude-sonnet-4', storedAt: 1_700_000_000_123 };
}

describe.each(implementations)('ResponseCacheStore conformance: $name', ({ name, open }) => {
  let store: ResponseCacheStore;

  beforeAll(async () => {
    store = await open();
  });

  afterAll(async () => {
    await store.close();
  });

  it('answers null for a key never written', async () => {
    expect(await store.get(`${name}-missing`)).toBeNull();
  });

  it('round-trips json and sse responses byte for byte', async () => {
    const json = response('json', '{"id":"chatcmpl-1","choices":[{"message":{"content":"ça va 😀\\n"}}]}');
    const sse = response('sse', 'event: message\ndata: {"x":1}\r\n\r\ndata: [DONE]\n\n');
    await store.set(`${name}-json`, json, 60);
    await store.set(`${name}-sse`, sse, 60);
    expect(await store.get(`${name}-json`)).toEqual(json);
    expect(await store.get(`${name}-sse`)).toEqual(sse);
  });

  it('replaces the value under a key', async () => {
    await store.set(`${name}-replace`, response('json', '"first"'), 60);
    await store.set(`${name}-replace`, response('json', '"second"'), 60);
    expect((await store.get(`${name}-replace`))?.body).toBe('"second"');
  });

  it('does not store with a non-positive TTL', async () => {
    await store.set(`${name}-zero`, response('json', '{}'), 0);
    expect(await store.get(`${name}-zero`)).toBeNull();
  });

  it('expires entries after their TTL', async () => {
    await store.set(`${name}-expiring`, response('json', '{}'), 1);
    expect(await store.get(`${name}-expiring`)).not.toBeNull();
    await sleep(1_100);
    expect(await store.get(`${name}-expiring`)).toBeNull();
  });

  it('answers ping', async () => {
    expect(await store.ping()).toBe(true);
  });
});
