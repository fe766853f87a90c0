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
  });
});
