import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisCacheStore, decodeCachedResponse, defaultRedisCachePrefix, encodeCachedResponse } from './redis-cache-store.ts';
import type { RedisCacheStore } from './redis-cache-store.ts';
import type { CachedResponse } from './response-cache.ts';
import { testServices } from '../../test/support/services.ts';
import { TcpProxy, capturingLogger, defaultTestRedisUrl, openRedisTestHarness, sleep } from './testing/redis-test-support.ts';
import type { RedisTestHarness } from './testing/redis-test-support.ts';

const redisUrl = process.env.REDIS_URL_TEST ?? defaultTestRedisUrl;
const unreachableRedisUrl = 'redis://127.0.0.1:1';

const sample: CachedResponse = {
  kind: 'sse',
  body: 'data: {"choices":[{"delta":{"content":"héllo 😀"}}]}\n\ndata: [DONE]\n\n',
  provider: 'openai',
  model: 'gpt-4o',
  storedAt: 1_700_000_000_000,
};

const warnLevel = 40;
const infoLevel = 30;

let harness: RedisTestHarness;
const opened: RedisCacheStore[] = [];

async function openStore(
  options: { url?: string; prefix?: string | null } = {},
): Promise<{ store: RedisCacheStore; lines: ReturnType<typeof capturingLogger>['lines'] }> {
  const { logger, lines } = capturingLogger();
  const prefix =
    options.prefix === null ? undefined : (options.prefix ?? (harness as RedisTestHarness | undefined)?.prefix ?? 'gateway-test:no-redis:');
  const store = await createRedisCacheStore({ url: options.url ?? redisUrl, prefix, logger });
  opened.push(store);
  return { store, lines };
}

beforeAll(async () => {
  if (testServices.redis) harness = await openRedisTestHarness(redisUrl);
});

afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
  await harness?.dispose();
});

describe.skipIf(!testServices.redis)('RedisCacheStore against Redis', () => {
  it('round-trips a response under <prefix><key> as JSON', async () => {
    const { store, lines } = await openStore();
    await store.set('round-trip', sample, 60);
    expect(await store.get('round-trip')).toEqual(sample);
    expect(await store.get('never-written')).toBeNull();
    const raw = await harness.admin.get(`${harness.prefix}round-trip`);
    expect(JSON.parse(raw ?? 'null')).toEqual(sample);
    expect(await store.ping()).toBe(true);
    expect(lines).toEqual([]);
  });

  it('sets the TTL on the key', async () => {
    const { store } = await openStore();
    await store.set('ttl', sample, 120);
    const ttl = await harness.admin.ttl(`${harness.prefix}ttl`);
    expect(ttl).toBeGreaterThan(110);
    expect(ttl).toBeLessThanOrEqual(120);
  });

  it('does not write with a non-positive TTL', async () => {
    const { store } = await openStore();
    await store.set('no-ttl', sample, 0);
    expect(await harness.admin.exists(`${harness.prefix}no-ttl`)).toBe(0);
  });

  it('uses gateway:response: as the default prefix', async () => {
    const { store } = await openStore({ prefix: null });
    const key = `default-prefix-${harness.prefix}`;
    try {
      await store.set(key, sample, 60);
      expect(await harness.admin.exists(`${defaultRedisCachePrefix}${key}`)).toBe(1);
    } finally {
      await harness.admin.del(`${defaultRedisCachePrefix}${key}`);
    }
  });

  it('treats an unreadable entry as a miss', async () => {
    const { store, lines } = await openStore();
    await harness.admin.set(`${harness.prefix}garbage`, 'not json', 'EX', 60);
    await harness.admin.set(`${harness.prefix}wrong-shape`, JSON.stringify({ kind: 'xml', body: 1 }), 'EX', 60);
    expect(await store.get('garbage')).toBeNull();
    expect(await store.get('wrong-shape')).toBeNull();
    expect(lines.filter((line) => line.level === warnLevel)).toHaveLength(2);
  });

  it('closes twice without throwing', async () => {
    const { store } = await openStore();
    await store.close();
    await store.close();
    expect(await store.ping()).toBe(false);
  });
});

describe('RedisCacheStore without Redis', () => {
  it('answers quickly, never throws, and logs the outage once', async () => {
    const started = performance.now();
    const { store, lines } = await openStore({ url: unreachableRedisUrl });
    expect(await store.get('anything')).toBeNull();
    await expect(store.set('anything', sample, 60)).resolves.toBeUndefined();
    expect(await store.ping()).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);

    for (let attempt = 0; attempt < 5; attempt += 1) expect(await store.get(`key-${attempt}`)).toBeNull();
    await sleep(300); // let a reconnect attempt fail too
    expect(await store.get('later')).toBeNull();
    expect(lines.filter((line) => line.level === warnLevel)).toHaveLength(1);
  });

  it.skipIf(!testServices.redis)('logs once when Redis goes away and once when it is back', async () => {
    const upstream = new URL(redisUrl);
    const proxy = new TcpProxy(upstream.hostname, Number(upstream.port || 6379));
    await proxy.start();
    try {
      const { store, lines } = await openStore({ url: `redis://127.0.0.1:${proxy.port}` });
      await store.set('outage', sample, 60);
      expect(await store.get('outage')).toEqual(sample);

      await proxy.stop();
      const started = performance.now();
      expect(await store.get('outage')).toBeNull();
      await store.set('outage', sample, 60);
      expect(await store.ping()).toBe(false);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(lines.map((line) => line.level)).toEqual([warnLevel]);

      await proxy.start();
      await waitFor(async () => (await store.get('outage')) !== null, 10_000);
      expect(await store.get('outage')).toEqual(sample);
      expect(lines.map((line) => line.level)).toEqual([warnLevel, infoLevel]);
    } finally {
      await proxy.stop();
    }
  });
  it.skipIf(!testServices.redis)('gives up after the command timeout when Redis stops answering', async () => {
    const upstream = new URL(redisUrl);
    const proxy = new TcpProxy(upstream.hostname, Number(upstream.port || 6379));
    await proxy.start();
    try {
      const { store, lines } = await openStore({ url: `redis://127.0.0.1:${proxy.port}` });
      expect(await store.ping()).toBe(true);
      proxy.freeze();
      const started = performance.now();
      expect(await store.get('hanging')).toBeNull();
      const elapsed = performance.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(150);
      expect(elapsed).toBeLessThan(1_000);
      await expect(store.set('hanging', sample, 60)).resolves.toBeUndefined();
      expect(await store.ping()).toBe(false);
      expect(lines.map((line) => line.level)).toEqual([warnLevel]);
    } finally {
      await proxy.stop();
    }
  });
});

describe('cached response encoding', () => {
  it('keeps only the fields of the port and rejects other shapes', () => {
    const withExtra = { ...sample, secret: 'x' } as CachedResponse;
    expect(JSON.parse(encodeCachedResponse(withExtra))).toEqual(sample);
    expect(decodeCachedResponse(encodeCachedResponse(sample))).toEqual(sample);
    expect(decodeCachedResponse('null')).toBeNull();
    expect(decodeCachedResponse(JSON.stringify({ ...sample, storedAt: '1' }))).toBeNull();
    expect(decodeCachedResponse(JSON.stringify({ ...sample, kind: 'text' }))).toBeNull();
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await sleep(50);
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}
