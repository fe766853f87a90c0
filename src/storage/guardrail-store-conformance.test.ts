import { describe, expect, it } from 'vitest';
import type { GuardrailRow } from '../guardrails/guardrail-store.ts';
import { postgresMigrations } from './postgres/migrations.ts';
import { sqliteMigrations } from './sqlite/migrations.ts';
import { baseTime, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);
const migrationsByBackend = { sqlite: sqliteMigrations, postgresql: postgresMigrations };
const guardrailsVersion = 12;

function guardrail(name: string, overrides: Partial<GuardrailRow> = {}): GuardrailRow {
  return {
    name,
    spec: {
      name,
      type: 'pii',
      mode: 'enforce',
      entities: ['email', 'card'],
      applies_to: { user_paths: ['/team'], models: [], endpoints: [] },
    },
    createdAt: baseTime,
    updatedAt: baseTime,
    ...overrides,
  };
}

describe.each(backends)('GuardrailStore conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('lists nothing when there are no guardrails', async () => {
    expect(await fresh().storage.guardrails.list()).toEqual([]);
  });

  it('round-trips rows exactly: nested settings, unicode, regex sources, large times', async () => {
    const { guardrails } = fresh().storage;
    const denyList = guardrail('deny-ü', {
      spec: { name: 'deny-ü', type: 'deny_list', terms: ['projet «falcon» ✓', 'a"b'], patterns: ['\\bfoo\\d+\\b'], fail_open: false },
      createdAt: 4_102_444_800_123,
      updatedAt: 4_102_444_800_456,
    });
    const pii = guardrail('pii', { updatedAt: baseTime + 1 });
    for (const row of [pii, denyList]) await guardrails.upsert(row);
    expect(await guardrails.list()).toEqual([denyList, pii]);
  });

  it('upsert replaces the row of the same name and keeps its createdAt', async () => {
    const { guardrails } = fresh().storage;
    await guardrails.upsert(guardrail('g'));
    const replacement = guardrail('g', {
      spec: { name: 'g', type: 'secrets', mode: 'monitor' },
      createdAt: baseTime + 500,
      updatedAt: baseTime + 500,
    });
    await guardrails.upsert(replacement);
    expect(await guardrails.list()).toEqual([{ ...replacement, createdAt: baseTime }]);
  });

  it('treats names case-sensitively and remove reports whether a row was there', async () => {
    const { guardrails } = fresh().storage;
    await guardrails.upsert(guardrail('Guard'));
    await guardrails.upsert(guardrail('guard', { spec: { name: 'guard', type: 'secrets' } }));
    expect((await guardrails.list()).map((row) => `${row.name} ${String(row.spec['type'])}`)).toEqual(['Guard pii', 'guard secrets']);
    expect(await guardrails.remove('GUARD')).toBe(false);
    expect(await guardrails.remove('guard')).toBe(true);
    expect(await guardrails.remove('guard')).toBe(false);
    expect((await guardrails.list()).map((row) => row.name)).toEqual(['Guard']);
  });

  it('lists by name in byte order', async () => {
    const { guardrails } = fresh().storage;
    const names = ['zeta', 'Zeta', 'a_b', 'a-b', 'a.b', 'ab', 'B', '0'];
    for (const name of names) await guardrails.upsert(guardrail(name));
    expect((await guardrails.list()).map((row) => row.name)).toEqual(['0', 'B', 'Zeta', 'a-b', 'a.b', 'a_b', 'ab', 'zeta']);
  });

  it('a database at version 11 gains guardrails (and the request log its guardrails column) on reopen', async () => {
    const shipped = migrationsByBackend[backend.name];
    const location = await backend.createLocation();
    try {
      const older = shipped.filter((migration) => migration.version < guardrailsVersion);
      expect(await location.migrate(older)).toEqual(older.map((migration) => migration.version));
      const storage = await location.open();
      try {
        expect(await location.appliedMigrations()).toContainEqual({ version: guardrailsVersion, name: 'guardrails' });
        await storage.guardrails.upsert(guardrail('g'));
        expect(await storage.guardrails.list()).toEqual([guardrail('g')]);
      } finally {
        await storage.close();
      }
    } finally {
      await location.dispose();
    }
  });
});
