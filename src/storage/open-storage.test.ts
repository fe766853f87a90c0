import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStorage } from './open-storage.ts';
import { describeDatabase } from './postgres/open-postgres-storage.ts';
import { openBetterSqlite3 } from './sqlite/better-sqlite3-driver.ts';

describe('openStorage with SQLite', () => {
  let directory: string | undefined;
  afterEach(async () => {
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  });

  it('creates missing parent directories and turns on WAL', async () => {
    directory = await mkdtemp(join(tmpdir(), 'gateway-open-'));
    const sqlitePath = join(directory, 'a', 'b', 'gateway.db');
    const storage = await openStorage({ type: 'sqlite', sqlitePath });
    await storage.close();
    expect(existsSync(sqlitePath)).toBe(true);
    const database = await openBetterSqlite3(sqlitePath, 1_000);
    try {
      expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      database.close();
    }
  });

  it('names the file when it cannot be opened', async () => {
    directory = await mkdtemp(join(tmpdir(), 'gateway-open-'));
    // The "file" is a directory: SQLite cannot open it.
    await expect(openStorage({ type: 'sqlite', sqlitePath: directory })).rejects.toThrow(`Cannot open SQLite database ${directory}`);
  });
});

describe('openStorage with PostgreSQL', () => {
  it('fails with the host in the message and without the password when nothing listens', async () => {
    const port = await unusedPort();
    const attempt = openStorage({ type: 'postgresql', databaseUrl: `postgres://gateway:s3cret-pass@127.0.0.1:${port}/gateway` });
    await expect(attempt).rejects.toThrow(`Cannot connect to PostgreSQL at 127.0.0.1:${port}/gateway`);
    await attempt.catch((error: unknown) => {
      expect(String(error)).not.toContain('s3cret-pass');
    });
  });

  it('describes a URL by host, port and database only', () => {
    expect(describeDatabase('postgres://user:pw@db.internal:6543/gateway?sslmode=require')).toBe('db.internal:6543/gateway');
    expect(describeDatabase('postgresql://db.internal/gateway')).toBe('db.internal:5432/gateway');
    expect(describeDatabase('not a url')).toBe('(unparsable database URL)');
  });
});

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
