import { describe, expect, it } from 'vitest';
import { postgresMigrations } from './postgres/migrations.ts';
import { sqliteMigrations } from './sqlite/migrations.ts';
import { usageRecord, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);
const migrationsByBackend = { sqlite: sqliteMigrations, postgresql: postgresMigrations };

describe.each(backends)('Storage conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);
  const expectedMigrations = migrationsByBackend[backend.name].map(({ version, name }) => ({ version, name }));

  it('reports its kind and answers ping', async () => {
    const { storage } = fresh();
    expect(storage.kind).toBe(backend.name);
    expect(await storage.ping()).toBe(true);
  });

  it('records every migration once, by version', async () => {
    const { location } = fresh();
    expect(expectedMigrations.map((migration) => migration.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
    expect(await location.appliedMigrations()).toEqual(expectedMigrations);
  });

  it('re-opening the same database applies nothing and keeps the data', async () => {
    const { storage, location } = fresh();
    const record = usageRecord();
    await storage.usage.insertMany([record]);
    const again = await location.open();
    try {
      expect(await location.appliedMigrations()).toEqual(expectedMigrations);
      expect(await again.usage.findByRequestId(record.requestId)).toEqual([record]);
    } finally {
      await again.close();
    }
  });

  it('concurrent opens of a new database apply each migration once', async () => {
    const { location } = fresh();
    const spare = await backend.createLocation();
    try {
      const opened = await Promise.all([spare.open(), spare.open(), spare.open(), spare.open()]);
      await Promise.all(opened.map((storage) => storage.close()));
      expect(await spare.appliedMigrations()).toEqual(expectedMigrations);
      expect(await location.appliedMigrations()).toEqual(expectedMigrations);
    } finally {
      await spare.dispose();
    }
  });

  it('close is idempotent and ping is false afterwards', async () => {
    const { location } = fresh();
    const storage = await location.open();
    await storage.close();
    await storage.close();
    expect(await storage.ping()).toBe(false);
  });
});
