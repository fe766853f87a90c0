import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ApiKeyRow, ApiKeyStore } from './api-key-store.ts';
import { ApiKeyService, hashApiKey } from './api-key-service.ts';

class MemoryKeys implements ApiKeyStore {
  rows: ApiKeyRow[] = [];
  async insert(row: ApiKeyRow) {
    this.rows.push(row);
  }
  async list() {
    return [...this.rows];
  }
  async deactivate(id: string, at: number) {
    const index = this.rows.findIndex((row) => row.id === id);
    const row = this.rows[index];
    if (row === undefined) return null;
    const updated = { ...row, deactivatedAt: row.deactivatedAt ?? at };
    this.rows[index] = updated;
    return updated;
  }
  async update(row: ApiKeyRow) {
    const index = this.rows.findIndex((candidate) => candidate.id === row.id);
    if (index === -1) return null;
    this.rows[index] = row;
    return row;
  }
}

describe('ApiKeyService', () => {
  it('creates sk-gw- keys of 43 base64url characters and stores only their hash', async () => {
    const store = new MemoryKeys();
    const service = new ApiKeyService({ store, refreshIntervalMs: 60_000, logger: pino({ level: 'silent' }) });
    await service.start();
    expect(service.hasKeys()).toBe(false);
    const { row, key } = await service.create({ name: 'ci', userPath: '/team/a', expiresAt: null });
    expect(key).toMatch(/^sk-gw-[A-Za-z0-9_-]{43}$/);
    expect(row.redacted).toBe(`sk-gw-…${key.slice(-4)}`);
    expect(JSON.stringify(store.rows)).not.toContain(key);
    expect(store.rows[0]?.keyHash).toBe(hashApiKey(key));
    expect(service.authenticate(key)).toEqual({
      kind: 'api_key',
      keyId: row.id,
      boundUserPath: '/team/a',
      allowedModels: null,
      allowedEndpoints: null,
      role: 'user',
    });
    expect(service.authenticate(`${key}x`)).toBeNull();
    service.stop();
  });

  it('refuses deactivated and expired keys, but keeps the gateway out of open mode', async () => {
    let now = 1_000_000;
    const service = new ApiKeyService({
      store: new MemoryKeys(),
      refreshIntervalMs: 60_000,
      logger: pino({ level: 'silent' }),
      now: () => now,
    });
    const expiring = await service.create({ name: 'short', userPath: null, expiresAt: now + 1000 });
    const revoked = await service.create({ name: 'revoked', userPath: null, expiresAt: null });
    await service.deactivate(revoked.row.id);
    expect(service.authenticate(revoked.key)).toBeNull();
    expect(service.authenticate(expiring.key)?.keyId).toBe(expiring.row.id);
    now += 2000;
    expect(service.authenticate(expiring.key)).toBeNull();
    expect(service.hasKeys()).toBe(true);
    await expect(service.deactivate('nope')).rejects.toMatchObject({ status: 404, code: 'api_key_not_found' });
  });

  it('rotates: the old secret works until the grace ends, the new one at once; the key carries its access', async () => {
    let now = 1_000_000;
    const service = new ApiKeyService({
      store: new MemoryKeys(),
      refreshIntervalMs: 60_000,
      logger: pino({ level: 'silent' }),
      now: () => now,
    });
    await service.start();
    const { row, key: oldKey } = await service.create({ name: 'r', userPath: null, expiresAt: null, allowedModels: ['m'], role: 'viewer' });
    const { key: newKey } = await service.rotate(row.id, 10);
    expect(newKey).not.toBe(oldKey);
    expect(service.authenticate(newKey)).toMatchObject({ keyId: row.id, allowedModels: ['m'], allowedEndpoints: null, role: 'viewer' });
    expect(service.authenticate(oldKey)?.keyId).toBe(row.id);
    now += 10_001;
    expect(service.authenticate(oldKey)).toBeNull();
    expect(service.authenticate(newKey)?.keyId).toBe(row.id);
    const { key: third } = await service.rotate(row.id, 0);
    expect(service.authenticate(newKey)).toBeNull();
    expect(service.authenticate(third)?.keyId).toBe(row.id);
  });

  it('updates allowlists and role; null clears an allowlist', async () => {
    const service = new ApiKeyService({ store: new MemoryKeys(), refreshIntervalMs: 60_000, logger: pino({ level: 'silent' }) });
    await service.start();
    const { row, key } = await service.create({ name: 'u', userPath: null, expiresAt: null, allowedEndpoints: ['/mcp'] });
    await service.update(row.id, { allowedModels: ['a/*'], allowedEndpoints: null, role: 'admin' });
    expect(service.authenticate(key)).toMatchObject({ allowedModels: ['a/*'], allowedEndpoints: null, role: 'admin' });
    await expect(service.update('nope', { role: 'user' })).rejects.toMatchObject({ code: 'api_key_not_found' });
  });
});
