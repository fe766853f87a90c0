import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { makeBudgetRule } from './budget-rules.ts';
import { RedisBudgetStore } from './redis-budget-store.ts';
import { SpendLedger } from './spend-ledger.ts';

// The shared budget store against the real Redis at 127.0.0.1:6379 (REDIS_URL), under a key
// prefix of its own: admission and holds are one atomic step for every replica on the prefix.

const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const clients: Redis[] = [];
const logger = pino({ level: 'silent' });
const now = Date.parse('2026-11-21T10:00:00Z');

function ledger(amount: number): SpendLedger {
  return new SpendLedger(
    makeBudgetRule({ userPath: '/team', periodSeconds: 86_400, amount, origin: 'config', createdAt: 0, updatedAt: 0 }),
  );
}

function replica(prefix: string, url = redisUrl): RedisBudgetStore {
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: false, retryStrategy: () => null });
  client.on('error', () => undefined);
  clients.push(client);
  return new RedisBudgetStore({ client, prefix, logger, timeoutMs: 2_000 });
}

afterAll(async () => {
  for (const client of clients) client.disconnect();
});

describe('RedisBudgetStore', () => {
  it('admits while spend plus holds is under the amount, for all replicas at once', async () => {
    const prefix = `test:budget:${randomUUID()}:`;
    const [first, second] = [replica(prefix), replica(prefix)];
    await new Promise((resolve) => setTimeout(resolve, 200));
    const holds = [];
    let refused = 0;
    for (let index = 0; index < 20; index += 1) {
      const answer = await (index % 2 === 0 ? first : second).admit([ledger(0.2)], 0.03, now);
      if (answer !== null && 'hold' in answer) holds.push(answer.hold);
      else if (answer !== null) refused += 1;
    }
    expect(holds).toHaveLength(7); // 7 x 0.03 = 0.21: the last one passes at 0.18
    expect(refused).toBe(13);
    // Settled: real spend charged, holds released; the spend alone now decides.
    first.charge([ledger(0.2)], 0.15, now);
    for (const hold of holds) hold.release();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // 0.15 spent: two more holds of 0.03 (0.15, then 0.18, under 0.20), not a third.
    expect(await second.admit([ledger(0.2)], 0.03, now)).toMatchObject({ hold: expect.anything() });
    expect(await first.admit([ledger(0.2)], 0.03, now)).toMatchObject({ hold: expect.anything() });
    expect(await second.admit([ledger(0.2)], 0.03, now)).toMatchObject({ blockedBy: 0 });
  });

  it('never counts less than the spend the asking replica knows', async () => {
    const prefix = `test:budget:${randomUUID()}:`;
    const store = replica(prefix);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const known = ledger(1);
    known.rebase(Date.parse('2026-11-21T00:00:00Z'), 1.5, Number.POSITIVE_INFINITY);
    expect(await store.admit([known], 0.01, now)).toMatchObject({ blockedBy: 0, spent: 1.5 });
    // ...and the floor is kept for the other replicas.
    const other = replica(prefix);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await other.admit([ledger(1)], 0.01, now)).toMatchObject({ blockedBy: 0 });
  });

  it('answers null (the process decides alone) when Redis does not answer', async () => {
    const store = replica(`test:budget:${randomUUID()}:`, 'redis://127.0.0.1:1');
    expect(await store.admit([ledger(1)], 0.01, now)).toBeNull();
  });
});
