import { describe, expect, it } from 'vitest';
import type { BudgetRow } from '../budgets/budget-store.ts';
import { baseTime, usageRecord, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);

function budget(userPath: string, overrides: Partial<BudgetRow> = {}): BudgetRow {
  return { userPath, period: 'daily', periodSeconds: 86_400, amount: 10, createdAt: baseTime, updatedAt: baseTime, ...overrides };
}

describe.each(backends)('BudgetStore conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('lists upserted rules exactly as written', async () => {
    const { budgets } = fresh().storage;
    const daily = budget('/team', { amount: 12.34 });
    const custom = budget('/team', { period: 'custom', periodSeconds: 90, amount: 0.5 });
    const other = budget('/Alpha', { period: 'monthly', periodSeconds: 2_592_000 });
    await budgets.upsert(daily);
    await budgets.upsert(custom);
    await budgets.upsert(other);
    expect(await budgets.list()).toEqual([other, custom, daily]);
  });

  it('upsert replaces the rule of the same identity and keeps its createdAt', async () => {
    const { budgets } = fresh().storage;
    await budgets.upsert(budget('/Team', { amount: 10 }));
    const replacement = budget('/team', { amount: 25, createdAt: baseTime + 500, updatedAt: baseTime + 500 });
    await budgets.upsert(replacement);
    expect(await budgets.list()).toEqual([{ ...replacement, createdAt: baseTime }]);
  });

  it('remove is case-insensitive on the path and reports whether a rule was there', async () => {
    const { budgets } = fresh().storage;
    await budgets.upsert(budget('/Team/App'));
    await budgets.upsert(budget('/team/app', { periodSeconds: 3_600, period: 'hourly' }));
    expect(await budgets.remove('/TEAM/app', 86_400)).toBe(true);
    expect(await budgets.remove('/team/app', 86_400)).toBe(false);
    expect(await budgets.remove('/nobody', 3_600)).toBe(false);
    expect((await budgets.list()).map((row) => row.periodSeconds)).toEqual([3_600]);
  });

  it('spentSince sums known costs of the subtree from the bound on', async () => {
    const { storage } = fresh();
    await storage.usage.insertMany([
      usageRecord({ userPath: '/team', timestamp: baseTime, costUsd: 1 }),
      usageRecord({ userPath: '/Team/App', timestamp: baseTime + 10, costUsd: 2 }),
      usageRecord({ userPath: '/team/app', timestamp: baseTime + 20, costUsd: null }),
      usageRecord({ userPath: '/team', timestamp: baseTime - 1, costUsd: 4 }),
      usageRecord({ userPath: '/team-alpha', timestamp: baseTime, costUsd: 8 }),
      usageRecord({ userPath: '/team_x', timestamp: baseTime, costUsd: 16 }),
    ]);
    expect(await storage.budgets.spentSince('/team', baseTime)).toBe(3);
    expect(await storage.budgets.spentSince('/TEAM/app', baseTime)).toBe(2);
    expect(await storage.budgets.spentSince('/team', baseTime - 1)).toBe(7);
    expect(await storage.budgets.spentSince('/team_x', baseTime)).toBe(16);
    expect(await storage.budgets.spentSince('/', baseTime)).toBe(27);
    expect(await storage.budgets.spentSince('/team', baseTime + 11)).toBe(0);
    expect(await storage.budgets.spentSince('/nobody', 0)).toBe(0);
    expect(await storage.budgets.spentSince('/team', baseTime - 1, baseTime + 10)).toBe(5);
    expect(await storage.budgets.spentSince('/', baseTime, baseTime + 1)).toBe(25);
  });

  it('spendBySecond sums known costs per lower-cased path and second, from the bound on', async () => {
    const { storage } = fresh();
    const second = Math.floor(baseTime / 1000);
    await storage.usage.insertMany([
      usageRecord({ userPath: '/Team', timestamp: second * 1000, costUsd: 1 }),
      usageRecord({ userPath: '/team', timestamp: second * 1000 + 999, costUsd: 2 }),
      usageRecord({ userPath: '/team', timestamp: second * 1000 + 1000, costUsd: 4 }),
      usageRecord({ userPath: '/team/app', timestamp: second * 1000 + 5, costUsd: null }),
      usageRecord({ userPath: '/other', timestamp: second * 1000 + 10, costUsd: 8 }),
      usageRecord({ userPath: '/team', timestamp: second * 1000 - 1, costUsd: 16 }),
    ]);
    const slices = await storage.budgets.spendBySecond(second * 1000);
    const sorted = [...slices].sort((left, right) => left.userPath.localeCompare(right.userPath) || left.second - right.second);
    expect(sorted).toEqual([
      { userPath: '/other', second, cost: 8 },
      { userPath: '/team', second, cost: 3 },
      { userPath: '/team', second: second + 1, cost: 4 },
    ]);
    expect(await storage.budgets.spendBySecond(second * 1000 + 2000)).toEqual([]);
  });
});
