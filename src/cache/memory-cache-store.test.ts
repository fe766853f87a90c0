import { describe, expect, it } from 'vitest';
import { MemoryCacheStore } from './memory-cache-store.ts';
import type { CachedResponse } from './response-cache.ts';

function response(body: string): CachedResponse {
  return { kind: 'json', body, provider: 'openai', model: 'gpt-4o', storedAt: 0 };
}

function fakeClock(start = 1_000_000): { now: () => number; advance: (milliseconds: number) => void } {
  let current = start;
  return { now: () => current, advance: (milliseconds) => (current += milliseconds) };
}

describe('MemoryCacheStore', () => {
  it('answers what was stored and null for unknown keys', async () => {
    const store = new MemoryCacheStore({ maxEntries: 10, maxBytes: 1_000 });
    await store.set('a', response('{"id":1}'), 60);
    expect(await store.get('a')).toEqual(response('{"id":1}'));
    expect(await store.get('b')).toBeNull();
    expect(await store.ping()).toBe(true);
  });

  it('evicts the least recently used entry beyond maxEntries', async () => {
    const store = new MemoryCacheStore({ maxEntries: 2, maxBytes: 1_000 });
    await store.set('a', response('A'), 60);
    await store.set('b', response('B'), 60);
    await store.set('c', response('C'), 60);
    expect(await store.get('a')).toBeNull();
    expect((await store.get('b'))?.body).toBe('B');
    expect((await store.get('c'))?.body).toBe('C');
    expect(store.entryCount).toBe(2);
  });

  it('moves an entry to most recently used on get', async () => {
    const store = new MemoryCacheStore({ maxEntries: 2, maxBytes: 1_000 });
    await store.set('a', response('A'), 60);
    await store.set('b', response('B'), 60);
    expect((await store.get('a'))?.body).toBe('A');
    await store.set('c', response('C'), 60);
    expect(await store.get('b')).toBeNull();
    expect((await store.get('a'))?.body).toBe('A');
    expect((await store.get('c'))?.body).toBe('C');
  });

  it('evicts least recently used entries until the total bytes fit', async () => {
    const store = new MemoryCacheStore({ maxEntries: 100, maxBytes: 10 });
    await store.set('a', response('aaaa'), 60);
    await store.set('b', response('bbbb'), 60);
    expect(store.totalBytes).toBe(8);
    // 4 + 4 + 6 = 14 > 10: dropping the oldest entry is enough.
    await store.set('c', response('cccccc'), 60);
    expect(await store.get('a')).toBeNull();
    expect(store.totalBytes).toBe(10);
    // Reading b makes c the oldest: 4 + 6 + 6 = 16 drops c and keeps b.
    expect((await store.get('b'))?.body).toBe('bbbb');
    await store.set('d', response('dddddd'), 60);
    expect(await store.get('c')).toBeNull();
    expect((await store.get('b'))?.body).toBe('bbbb');
    // 4 + 6 + 9 = 19 needs two evictions.
    await store.set('e', response('eeeeeeeee'), 60);
    expect(await store.get('d')).toBeNull();
    expect(await store.get('b')).toBeNull();
    expect((await store.get('e'))?.body).toBe('eeeeeeeee');
    expect(store.totalBytes).toBe(9);
  });

  it('counts UTF-8 bytes, not characters', async () => {
    const store = new MemoryCacheStore({ maxEntries: 100, maxBytes: 100 });
    await store.set('a', response('é€😀'), 60);
    expect(store.totalBytes).toBe(2 + 3 + 4);
  });

  it('does not store an entry larger than maxBytes and keeps the others', async () => {
    const store = new MemoryCacheStore({ maxEntries: 100, maxBytes: 5 });
    await store.set('small', response('12345'), 60);
    await store.set('large', response('123456'), 60);
    expect(await store.get('large')).toBeNull();
    expect((await store.get('small'))?.body).toBe('12345');
    expect(store.entryCount).toBe(1);
    expect(store.totalBytes).toBe(5);
  });

  it('drops the older value when a replacement is too large to store', async () => {
    const store = new MemoryCacheStore({ maxEntries: 100, maxBytes: 5 });
    await store.set('a', response('old'), 60);
    await store.set('a', response('much too large'), 60);
    expect(await store.get('a')).toBeNull();
    expect(store.totalBytes).toBe(0);
  });

  it('replaces an entry under the same key and accounts its bytes once', async () => {
    const store = new MemoryCacheStore({ maxEntries: 100, maxBytes: 100 });
    await store.set('a', response('first'), 60);
    await store.set('a', response('second!'), 60);
    expect((await store.get('a'))?.body).toBe('second!');
    expect(store.entryCount).toBe(1);
    expect(store.totalBytes).toBe(7);
  });

  it('treats an expired entry as a miss and drops it', async () => {
    const clock = fakeClock();
    const store = new MemoryCacheStore({ maxEntries: 10, maxBytes: 1_000, now: clock.now });
    await store.set('a', response('A'), 30);
    clock.advance(29_999);
    expect((await store.get('a'))?.body).toBe('A');
    clock.advance(1);
    expect(await store.get('a')).toBeNull();
    expect(store.entryCount).toBe(0);
    expect(store.totalBytes).toBe(0);
  });

  it('gives every entry its own TTL', async () => {
    const clock = fakeClock();
    const store = new MemoryCacheStore({ maxEntries: 10, maxBytes: 1_000, now: clock.now });
    await store.set('short', response('S'), 1);
    await store.set('long', response('L'), 10);
    clock.advance(5_000);
    expect(await store.get('short')).toBeNull();
    expect((await store.get('long'))?.body).toBe('L');
  });

  it('does not store with a non-positive TTL', async () => {
    const store = new MemoryCacheStore({ maxEntries: 10, maxBytes: 1_000 });
    await store.set('zero', response('Z'), 0);
    await store.set('negative', response('N'), -5);
    expect(store.entryCount).toBe(0);
  });

  it('empties on close', async () => {
    const store = new MemoryCacheStore({ maxEntries: 10, maxBytes: 1_000 });
    await store.set('a', response('A'), 60);
    await store.close();
    expect(await store.get('a')).toBeNull();
    expect(store.totalBytes).toBe(0);
  });

  it('rejects bounds that are not positive integers', () => {
    expect(() => new MemoryCacheStore({ maxEntries: 0, maxBytes: 10 })).toThrow(RangeError);
    expect(() => new MemoryCacheStore({ maxEntries: 10, maxBytes: 1.5 })).toThrow(RangeError);
  });
});
