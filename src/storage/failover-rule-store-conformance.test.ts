import { describe, expect, it } from 'vitest';
import type { FailoverRuleRow } from '../routing/failover-rule.ts';
import { postgresMigrations } from './postgres/migrations.ts';
import { sqliteMigrations } from './sqlite/migrations.ts';
import { baseTime, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);
const migrationsByBackend = { sqlite: sqliteMigrations, postgresql: postgresMigrations };
const failoverRulesVersion = 9;

function rule(model: string, overrides: Partial<FailoverRuleRow> = {}): FailoverRuleRow {
  return {
    model,
    fallbacks: ['openai-b/gpt-4o-mini'],
    on: ['5xx', '429', 'timeout', 'connection', 'saturated'],
    createdAt: baseTime,
    updatedAt: baseTime,
    ...overrides,
  };
}

describe.each(backends)('FailoverRuleStore conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('lists nothing when there are no rules', async () => {
    expect(await fresh().storage.failoverRules.list()).toEqual([]);
  });

  it('round-trips rows exactly: fallbacks in order, trigger subsets, odd model ids, large times', async () => {
    const { failoverRules } = fresh().storage;
    const qualified = rule('openai/gpt-4o', {
      fallbacks: ['anthropic/claude-sonnet-4', 'gpt-4o-mini', 'groq/llama/3.1 "8b"'],
      on: ['429'],
      updatedAt: baseTime + 1,
    });
    const bare = rule('meta-llama/llama-3 «x» ✓', {
      on: ['timeout', 'saturated'],
      createdAt: 4_102_444_800_123,
      updatedAt: 4_102_444_800_456,
    });
    for (const row of [qualified, bare]) await failoverRules.upsert(row);
    expect(await failoverRules.list()).toEqual([bare, qualified]);
  });

  it('upsert replaces the row of the same model and keeps its createdAt', async () => {
    const { failoverRules } = fresh().storage;
    await failoverRules.upsert(rule('m', { on: ['5xx'] }));
    const replacement = rule('m', { fallbacks: ['b/m', 'c/m'], on: ['connection'], createdAt: baseTime + 500, updatedAt: baseTime + 500 });
    await failoverRules.upsert(replacement);
    expect(await failoverRules.list()).toEqual([{ ...replacement, createdAt: baseTime }]);
  });

  it('treats models case-sensitively and remove reports whether a row was there', async () => {
    const { failoverRules } = fresh().storage;
    await failoverRules.upsert(rule('Model'));
    await failoverRules.upsert(rule('model', { on: ['429'] }));
    expect((await failoverRules.list()).map((row) => `${row.model} ${row.on.join(',')}`)).toEqual([
      'Model 5xx,429,timeout,connection,saturated',
      'model 429',
    ]);
    expect(await failoverRules.remove('MODEL')).toBe(false);
    expect(await failoverRules.remove('model')).toBe(true);
    expect(await failoverRules.remove('model')).toBe(false);
    expect((await failoverRules.list()).map((row) => row.model)).toEqual(['Model']);
  });

  it('lists by model in byte order', async () => {
    const { failoverRules } = fresh().storage;
    const models = ['zeta', 'Zeta', 'a_b', 'a-b', 'a/b', 'ab', 'B', 'é'];
    for (const model of models) await failoverRules.upsert(rule(model));
    expect((await failoverRules.list()).map((row) => row.model)).toEqual(['B', 'Zeta', 'a-b', 'a/b', 'a_b', 'ab', 'zeta', 'é']);
  });

  it('a database at version 7 gains failover rules on reopen', async () => {
    const shipped = migrationsByBackend[backend.name];
    const location = await backend.createLocation();
    try {
      const older = shipped.filter((migration) => migration.version < failoverRulesVersion);
      expect(await location.migrate(older)).toEqual(older.map((migration) => migration.version));
      const storage = await location.open();
      try {
        expect(await location.appliedMigrations()).toContainEqual({ version: failoverRulesVersion, name: 'failover_rules' });
        await storage.failoverRules.upsert(rule('m'));
        expect(await storage.failoverRules.list()).toEqual([rule('m')]);
      } finally {
        await storage.close();
      }
    } finally {
      await location.dispose();
    }
  });
});
