import { describe, expect, it } from 'vitest';
import type { VirtualModelRow } from '../routing/virtual-model.ts';
import { postgresMigrations } from './postgres/migrations.ts';
import { sqliteMigrations } from './sqlite/migrations.ts';
import { baseTime, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);
const migrationsByBackend = { sqlite: sqliteMigrations, postgresql: postgresMigrations };
const virtualModelsVersion = 5;

function virtualModel(name: string, overrides: Partial<VirtualModelRow> = {}): VirtualModelRow {
  return {
    name,
    targets: [{ model: 'gpt-4o-mini', weight: 1 }],
    strategy: 'round_robin',
    description: '',
    createdAt: baseTime,
    updatedAt: baseTime,
    ...overrides,
  };
}

describe.each(backends)('VirtualModelStore conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('lists nothing when there are no virtual models', async () => {
    expect(await fresh().storage.virtualModels.list()).toEqual([]);
  });

  it('round-trips rows exactly: targets with and without provider, weights, strategies, large times', async () => {
    const { virtualModels } = fresh().storage;
    const weighted = virtualModel('fast', {
      targets: [
        { provider: 'openai-east', model: 'gpt-4o-mini', weight: 3 },
        { model: 'claude-3-5-haiku', weight: 1 },
        { provider: 'groq', model: 'llama/3.1 "8b"', weight: 1_000 },
      ],
      description: 'Cheap and quick — «fast» ✓',
      updatedAt: baseTime + 1,
    });
    const failover = virtualModel('team/smart', {
      targets: [{ provider: 'anthropic', model: 'claude-sonnet-4', weight: 1 }],
      strategy: 'failover',
      createdAt: 4_102_444_800_123,
      updatedAt: 4_102_444_800_456,
    });
    const leastBusy = virtualModel('busy', { strategy: 'least_busy' });
    for (const row of [weighted, failover, leastBusy]) await virtualModels.upsert(row);
    const listed = await virtualModels.list();
    expect(listed).toEqual([leastBusy, weighted, failover]);
    expect(listed[1]?.targets[1]).not.toHaveProperty('provider');
  });

  it('upsert replaces the row of the same name and keeps its createdAt', async () => {
    const { virtualModels } = fresh().storage;
    await virtualModels.upsert(virtualModel('alias', { description: 'first' }));
    const replacement = virtualModel('alias', {
      targets: [
        { provider: 'openai', model: 'gpt-4o', weight: 2 },
        { model: 'gpt-4o-mini', weight: 1 },
      ],
      strategy: 'failover',
      description: 'second',
      createdAt: baseTime + 500,
      updatedAt: baseTime + 500,
    });
    await virtualModels.upsert(replacement);
    expect(await virtualModels.list()).toEqual([{ ...replacement, createdAt: baseTime }]);
  });

  it('treats names case-sensitively', async () => {
    const { virtualModels } = fresh().storage;
    await virtualModels.upsert(virtualModel('Alias'));
    await virtualModels.upsert(virtualModel('alias', { strategy: 'failover' }));
    expect((await virtualModels.list()).map(({ name, strategy }) => `${name} ${strategy}`)).toEqual([
      'Alias round_robin',
      'alias failover',
    ]);
    expect(await virtualModels.remove('ALIAS')).toBe(false);
  });

  it('remove reports whether a row was there', async () => {
    const { virtualModels } = fresh().storage;
    await virtualModels.upsert(virtualModel('one'));
    await virtualModels.upsert(virtualModel('two'));
    expect(await virtualModels.remove('one')).toBe(true);
    expect(await virtualModels.remove('one')).toBe(false);
    expect(await virtualModels.remove('nobody')).toBe(false);
    expect((await virtualModels.list()).map((row) => row.name)).toEqual(['two']);
  });

  it('lists by name in byte order', async () => {
    const { virtualModels } = fresh().storage;
    const names = ['zeta', 'Zeta', 'alpha', 'a_b', 'a-b', 'a.b', 'ab', 'a/b', 'B', 'é'];
    for (const name of names) await virtualModels.upsert(virtualModel(name));
    expect((await virtualModels.list()).map((row) => row.name)).toEqual([
      'B',
      'Zeta',
      'a-b',
      'a.b',
      'a/b',
      'a_b',
      'ab',
      'alpha',
      'zeta',
      'é',
    ]);
  });

  it('a database at version 4 gains virtual models on reopen', async () => {
    const shipped = migrationsByBackend[backend.name];
    const location = await backend.createLocation();
    try {
      const older = shipped.filter((migration) => migration.version < virtualModelsVersion);
      expect(await location.migrate(older)).toEqual([1, 2, 3, 4]);
      const storage = await location.open();
      try {
        expect(await location.appliedMigrations()).toEqual(shipped.map(({ version, name }) => ({ version, name })));
        expect(await location.appliedMigrations()).toContainEqual({ version: virtualModelsVersion, name: 'virtual_models' });
        await storage.virtualModels.upsert(virtualModel('alias'));
        expect(await storage.virtualModels.list()).toEqual([virtualModel('alias')]);
      } finally {
        await storage.close();
      }
    } finally {
      await location.dispose();
    }
  });
});
