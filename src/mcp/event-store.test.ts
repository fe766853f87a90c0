import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { testServices } from '../../test/support/services.ts';
import { MemoryEventStores, parseEventId, type EventBounds, type SessionEventStores } from './event-store.ts';
import { createRedisEventStores } from './redis-event-store.ts';

const note = (text: string): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: text } });
const bounds: EventBounds = { maxEvents: 3, maxBytes: 500, maxEventBytes: 300, ttlMs: 60_000 };

async function replayed(stores: SessionEventStores, session: string, lastEventId: string): Promise<string[]> {
  const seen: string[] = [];
  await stores.replay(session, lastEventId, (_id, message) => {
    seen.push(String((message as { params?: { data?: unknown } }).params?.data));
    return Promise.resolve();
  });
  return seen;
}

function contract(name: string, make: () => Promise<SessionEventStores>): void {
  describe(`${name} event stores`, () => {
    const made: SessionEventStores[] = [];
    const fresh = async (): Promise<SessionEventStores> => {
      const stores = await make();
      made.push(stores);
      return stores;
    };
    afterAll(async () => {
      await Promise.all(made.map((stores) => stores.close()));
    });

    it('replays a stream after an event id, only within its own session', async () => {
      const stores = await fresh();
      const session = `s-${Math.random()}`;
      const store = stores.forSession(session);
      const first = await store.storeEvent('stream-a', note('one'));
      await store.storeEvent('stream-b', note('other stream'));
      await store.storeEvent('stream-a', note('two'));
      expect(parseEventId(first)?.[0]).toBe('stream-a');
      expect(await replayed(stores, session, first)).toEqual(['two']);
      expect(await replayed(stores, `other-${session}`, first)).toEqual([]);
      expect(await replayed(stores, session, 'not-an-id')).toEqual([]);
    });

    it('keeps the last events within the count and byte bounds, and skips an oversized one', async () => {
      const stores = await fresh();
      const session = `s-${Math.random()}`;
      const store = stores.forSession(session);
      const start = await store.storeEvent('s', note('start'));
      for (const text of ['a', 'b', 'c', 'd']) await store.storeEvent('s', note(text));
      expect(await replayed(stores, session, start)).toEqual(['b', 'c', 'd']);
      await store.storeEvent('s', note('x'.repeat(400)));
      expect(await replayed(stores, session, start)).toEqual(['b', 'c', 'd']);
      await store.storeEvent('s', note('y'.repeat(150)));
      await store.storeEvent('s', note('z'.repeat(150)));
      expect((await replayed(stores, session, start)).map((text) => text[0])).toEqual(['y', 'z']);
      stores.forget(session);
      expect(await replayed(stores, session, start)).toEqual([]);
    });
  });
}

contract('memory', () => Promise.resolve(new MemoryEventStores(bounds)));
if (testServices.redis) {
  contract('redis', () => createRedisEventStores(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', pino({ level: 'silent' }), bounds));
}

describe('memory event store TTL and total bound', () => {
  it('drops events past their TTL and keeps all sessions within the total bytes', async () => {
    const stores = new MemoryEventStores({ ...bounds, ttlMs: 0 }, 10_000);
    const store = stores.forSession('s');
    const start = await store.storeEvent('s', note('start'));
    await store.storeEvent('s', note('late'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await replayed(stores, 's', start)).toEqual([]);
    const tight = new MemoryEventStores(bounds, 330);
    const one = tight.forSession('one');
    const two = tight.forSession('two');
    const mark = await one.storeEvent('s', note('first'));
    await one.storeEvent('s', note('x'.repeat(150)));
    // Over the total, the storing session gives up its oldest events (here all of them).
    expect((await replayed(tight, 'one', mark)).map((text) => text[0])).toEqual(['x']);
    await two.storeEvent('s', note('y'.repeat(150)));
    expect(await replayed(tight, 'two', 's:0')).toEqual([]);
    expect((await replayed(tight, 'one', mark)).map((text) => text[0])).toEqual(['x']);
  });
});
