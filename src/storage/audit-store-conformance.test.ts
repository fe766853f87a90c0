import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../audit/audit-store.ts';
import { timeOrderedUuid } from '../core/time-ordered-id.ts';
import { baseTime, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);

function entry(offset: number, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: timeOrderedUuid(baseTime + offset),
    time: baseTime + offset,
    actor: 'master',
    action: 'upsert',
    resource: 'budgets',
    before: null,
    after: { user_path: '/team', amount: 5 },
    ...overrides,
  };
}

describe.each(backends)('AuditStore conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('lists entries newest first, exactly as inserted, and pages by id', async () => {
    const { audit } = fresh().storage;
    const entries = [entry(1), entry(2, { before: { a: [1, 'x'] }, after: null }), entry(3, { action: 'delete' })];
    for (const item of entries) await audit.insert(item);
    expect(await audit.list({ limit: 10 })).toEqual([...entries].reverse());
    const first = await audit.list({ limit: 2 });
    expect(first).toEqual([entries[2], entries[1]]);
    expect(await audit.list({ limit: 2, before: first[1]?.id })).toEqual([entries[0]]);
  });

  it('filters by time range, actor, action and resource (with its items)', async () => {
    const { audit } = fresh().storage;
    const key = entry(1, { actor: 'key-9', action: 'create', resource: 'api-keys/abc' });
    const budget = entry(5);
    const lookalike = entry(7, { resource: 'api-keys-extra' });
    for (const item of [key, budget, lookalike]) await audit.insert(item);
    expect(await audit.list({ limit: 10, from: baseTime + 2, to: baseTime + 7 })).toEqual([budget]);
    expect(await audit.list({ limit: 10, actor: 'key-9' })).toEqual([key]);
    expect(await audit.list({ limit: 10, action: 'upsert' })).toEqual([lookalike, budget]);
    expect(await audit.list({ limit: 10, resource: 'api-keys' })).toEqual([key]);
    expect(await audit.list({ limit: 10, resource: 'api-keys/abc' })).toEqual([key]);
  });
});
