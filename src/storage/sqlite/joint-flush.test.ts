import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RequestLogRecorder } from '../../request-log/request-log-recorder.ts';
import { UsageRecorder } from '../../usage/usage-recorder.ts';
import { requestLogEntry, usageRecord } from '../testing/fixtures.ts';
import { openSqliteStorage } from './open-sqlite-storage.ts';
import type { WriterRequest } from './writer-protocol.ts';

const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));

describe('usage and request log batches of one tick (ADR 23)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('reach the writer thread as one message, though the recorders started apart', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'joint-flush-'));
    const storage = await openSqliteStorage(join(directory, 'gateway.db'));
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    const logger = pino({ level: 'silent' });
    const usage = new UsageRecorder({ store: storage.usage, flushIntervalMs: 40, batchSize: 500, logger });
    const requestLog = new RequestLogRecorder({ store: storage.requestLog, flushIntervalMs: 40, batchSize: 500, logger });
    usage.start();
    await sleep(13); // timers of their own would now fire in different turns
    requestLog.start();
    const entries = [requestLogEntry(), requestLogEntry()];
    for (const entry of entries) {
      usage.record(usageRecord({ id: `u-${entry.id}`, requestId: entry.id }));
      requestLog.record(entry);
    }
    while (usage.pending + requestLog.pending > 0) await sleep(10);
    await Promise.all([usage.stop(), requestLog.stop()]);

    const inserts = posted.mock.calls.map(([message]) => message as WriterRequest).filter((message) => message.kind === 'insert');
    expect(inserts.map((message) => message.batches.map((batch) => [batch.table, batch.rows.length]))).toEqual([
      [
        ['usage_records', 2],
        ['request_log', 2],
      ],
    ]);
    expect(await storage.requestLog.find(entries[1]?.id ?? '')).toMatchObject({ id: entries[1]?.id });
    expect(await storage.usage.findByRequestId(entries[0]?.id ?? '')).toHaveLength(1);
    await storage.close();
    await rm(directory, { recursive: true, force: true });
  });
});
