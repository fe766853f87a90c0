import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { baseTime, requestLogEntry, useFreshStorage } from '../storage/testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from '../storage/testing/storage-backends.ts';
import type { RequestLogStore } from './request-log-store.ts';
import { RetentionSweep } from './retention-sweep.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);
const day = 86_400_000;

describe.each(backends)('request log retention sweep: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('deletes what is past retention in bounded batches and keeps the rest', async () => {
    const store = fresh().storage.requestLog;
    const now = baseTime + 40 * day;
    const old = Array.from({ length: 35 }, (_, index) => requestLogEntry({ id: `old-${index}`, time: baseTime + index }));
    const kept = Array.from({ length: 3 }, (_, index) => requestLogEntry({ id: `kept-${index}`, time: now - 29 * day + index }));
    await store.insertMany([...old, ...kept]);
    const limits: number[] = [];
    const counting: RequestLogStore = {
      insertMany: (entries) => store.insertMany(entries),
      list: (query) => store.list(query),
      find: (id) => store.find(id),
      stats: (query) => store.stats(query),
      keyActivity: (from) => store.keyActivity(from),
      deleteOlderThan: async (before, limit) => {
        limits.push(limit);
        return store.deleteOlderThan(before, limit);
      },
    };
    const sweep = new RetentionSweep({
      store: counting,
      retentionDays: 30,
      batchSize: 10,
      pauseMs: 0,
      logger: pino({ level: 'silent' }),
      now: () => now,
    });
    expect(await sweep.sweep()).toBe(35);
    expect(limits).toEqual([10, 10, 10, 10]);
    const left = await store.list({ limit: 100 });
    expect(left.entries.map((entry) => entry.id)).toEqual(['kept-2', 'kept-1', 'kept-0']);
    expect(await sweep.sweep()).toBe(0);
    await sweep.stop();
  });
});
