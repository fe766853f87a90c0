import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { UsageRecorder } from './usage-recorder.ts';
import type { UsageRecord, UsageStore } from './usage-store.ts';

const record = (requestId: string): UsageRecord => ({
  id: requestId,
  requestId,
  timestamp: 1,
  userPath: '/',
  apiKeyId: null,
  endpoint: '/v1/chat/completions',
  provider: 'p',
  model: 'm',
  promptTokens: 1,
  completionTokens: 1,
  totalTokens: 2,
  usage: null,
  costUsd: null,
  cacheHit: false,
  stream: false,
  status: 200,
  latencyMs: 1,
});

class FakeStore implements Pick<UsageStore, 'insertMany'> {
  batches: string[][] = [];
  failuresLeft = 0;
  async insertMany(records: readonly UsageRecord[]): Promise<void> {
    if (this.failuresLeft > 0) {
      this.failuresLeft -= 1;
      throw new Error('database down');
    }
    this.batches.push(records.map((item) => item.requestId));
  }
}

const recorderWith = (store: FakeStore, batchSize = 3) =>
  new UsageRecorder({ store: store as unknown as UsageStore, flushIntervalMs: 10_000, batchSize, logger: pino({ level: 'silent' }) });

describe('UsageRecorder', () => {
  it('queues without writing, then writes in batches in order', async () => {
    const store = new FakeStore();
    const recorder = recorderWith(store, 100);
    ['a', 'b', 'c', 'd'].forEach((id) => recorder.record(record(id)));
    expect(store.batches).toEqual([]);
    expect(recorder.settledThrough).toBe(0);
    await recorder.flush();
    expect(store.batches).toEqual([['a', 'b', 'c', 'd']]);
    expect(recorder.settledThrough).toBe(4);
  });

  it('starts a flush by itself when a batch is full', async () => {
    const store = new FakeStore();
    const recorder = recorderWith(store, 2);
    recorder.record(record('a'));
    recorder.record(record('b'));
    await recorder.flush();
    expect(store.batches[0]).toEqual(['a', 'b']);
  });

  it('leaves records queued during a write for the next flush, so that batches stay large', async () => {
    const store = new FakeStore();
    const recorder = recorderWith(store, 2);
    recorder.record(record('a'));
    recorder.record(record('b')); // a full batch: its write starts
    recorder.record(record('c')); // queued while it runs
    await recorder.whileSettled(async () => undefined); // the running write is done
    expect(store.batches).toEqual([['a', 'b']]);
    expect(recorder.pending).toBe(1);
    expect(recorder.settledThrough).toBe(2);
    await recorder.flush();
    expect(store.batches).toEqual([['a', 'b'], ['c']]);
  });

  it('writes a batch that filled up during a write at once, without waiting for the tick', async () => {
    const store = new FakeStore();
    const recorder = recorderWith(store, 2);
    recorder.start(); // a 10 s tick: too late for this test
    recorder.record(record('a'));
    recorder.record(record('b')); // a full batch: its write starts
    recorder.record(record('c'));
    recorder.record(record('d')); // a second full batch, queued while the first is written
    await vi.waitFor(
      () =>
        expect(store.batches).toEqual([
          ['a', 'b'],
          ['c', 'd'],
        ]),
      { timeout: 1_000 },
    );
    await recorder.stop();
  });

  it('keeps records through a failure and writes them, in order, on the next flush', async () => {
    const store = new FakeStore();
    store.failuresLeft = 1;
    const recorder = recorderWith(store, 10);
    ['a', 'b', 'c'].forEach((id) => recorder.record(record(id)));
    recorder.record(record('d'));
    await recorder.flush();
    expect(store.batches).toEqual([]);
    expect(recorder.pending).toBe(4);
    expect(recorder.settledThrough).toBe(0);
    await recorder.flush();
    expect(store.batches).toEqual([['a', 'b', 'c', 'd']]);
    expect(recorder.settledThrough).toBe(4);
    expect(recorder.pending).toBe(0);
  });

  it('stop() writes everything left', async () => {
    const store = new FakeStore();
    const recorder = recorderWith(store, 100);
    recorder.start();
    recorder.record(record('last'));
    await recorder.stop();
    expect(store.batches).toEqual([['last']]);
  });
});

describe('UsageRecorder.whileSettled', () => {
  it('holds batch writes off while a reader runs, so the reader sees a settled database', async () => {
    const store = new FakeStore();
    const recorder = recorderWith(store, 100);
    recorder.record(record('a'));
    let writtenDuringRead = -1;
    const reading = recorder.whileSettled(async (settled) => {
      const flushing = recorder.flush();
      await new Promise((resolve) => setTimeout(resolve, 20));
      writtenDuringRead = store.batches.length;
      void flushing;
      return settled;
    });
    expect(await reading).toBe(0);
    expect(writtenDuringRead).toBe(0);
    await recorder.flush();
    expect(store.batches).toEqual([['a']]);
    expect(await recorder.whileSettled(async (settled) => settled)).toBe(1);
  });
});
