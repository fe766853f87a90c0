import { describe, expect, it } from 'vitest';
import type { ApiKeyRow } from '../auth/api-keys/api-key-store.ts';
import { baseTime, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);

function apiKey(id: string, overrides: Partial<ApiKeyRow> = {}): ApiKeyRow {
  return {
    id,
    name: `key ${id}`,
    keyHash: `hash-${id}`.padEnd(64, '0'),
    redacted: `sk-gw-…${id.slice(-4)}`,
    userPath: '/team',
    createdAt: baseTime,
    expiresAt: null,
    deactivatedAt: null,
    allowedModels: null,
    allowedEndpoints: null,
    role: 'user',
    previousKeyHash: null,
    previousExpiresAt: null,
    ...overrides,
  };
}

describe.each(backends)('ApiKeyStore conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('lists inserted keys, oldest first, exactly as inserted', async () => {
    const { apiKeys } = fresh().storage;
    const newer = apiKey('key-b', { createdAt: baseTime + 2, expiresAt: 4_102_444_800_000, userPath: null });
    const older = apiKey('key-a', { createdAt: baseTime + 1, deactivatedAt: baseTime + 5 });
    await apiKeys.insert(newer);
    await apiKeys.insert(older);
    expect(await apiKeys.list()).toEqual([older, newer]);
  });

  it('lists nothing when there are no keys', async () => {
    expect(await fresh().storage.apiKeys.list()).toEqual([]);
  });

  it('deactivates once: a second deactivation keeps the first time', async () => {
    const { apiKeys } = fresh().storage;
    const row = apiKey('key-1');
    await apiKeys.insert(row);
    expect(await apiKeys.deactivate('key-1', baseTime + 100)).toEqual({ ...row, deactivatedAt: baseTime + 100 });
    expect(await apiKeys.deactivate('key-1', baseTime + 200)).toEqual({ ...row, deactivatedAt: baseTime + 100 });
    expect(await apiKeys.list()).toEqual([{ ...row, deactivatedAt: baseTime + 100 }]);
  });

  it('returns null when deactivating an unknown id', async () => {
    const { apiKeys } = fresh().storage;
    await apiKeys.insert(apiKey('key-1'));
    expect(await apiKeys.deactivate('key-unknown', baseTime)).toBeNull();
    expect((await apiKeys.list())[0]?.deactivatedAt).toBeNull();
  });

  it('rejects a second key with the same hash, or the same id', async () => {
    const { apiKeys } = fresh().storage;
    await apiKeys.insert(apiKey('key-1'));
    await expect(apiKeys.insert(apiKey('key-2', { keyHash: apiKey('key-1').keyHash }))).rejects.toThrow();
    await expect(apiKeys.insert(apiKey('key-1', { keyHash: 'f'.repeat(64) }))).rejects.toThrow();
    expect((await apiKeys.list()).map((row) => row.id)).toEqual(['key-1']);
  });

  it('stores allowlists, role and rotation state, and updates them by id', async () => {
    const { apiKeys } = fresh().storage;
    const row = apiKey('key-1', {
      allowedModels: ['openai/*', 'smart'],
      allowedEndpoints: ['/v1/chat/completions', '/mcp'],
      role: 'viewer',
    });
    await apiKeys.insert(row);
    expect(await apiKeys.list()).toEqual([row]);
    const rotated = {
      ...row,
      keyHash: 'e'.repeat(64),
      redacted: 'sk-gw-…eeee',
      previousKeyHash: row.keyHash,
      previousExpiresAt: baseTime + 60_000,
    };
    const changed = { ...rotated, name: 'renamed', allowedModels: [], allowedEndpoints: null, role: 'admin' as const };
    expect(await apiKeys.update(changed)).toEqual(changed);
    expect(await apiKeys.list()).toEqual([changed]);
    expect(await apiKeys.update({ ...changed, id: 'key-unknown' })).toBeNull();
  });
});
