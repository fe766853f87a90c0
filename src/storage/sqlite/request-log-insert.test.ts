import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqlRequestLogStore } from '../sql/sql-request-log-store.ts';
import { requestLogEntry } from '../testing/fixtures.ts';
import { openBetterSqlite3, type SqliteDatabase } from './better-sqlite3-driver.ts';
import { migrateSqlite } from './migrate-sqlite.ts';
import { sqliteMigrations } from './migrations.ts';
import { SqliteExecutor } from './sqlite-executor.ts';
import { SqliteWriter } from './sqlite-writer.ts';

// Request log entries become rows on the main thread (attempts JSON, lower-cased user path,
// status class) and cross to the writer thread as arrays: cheaper to clone than the entries
// (ADR 23). The thread, and the main connection when it is unavailable, write the same rows.
describe('SqlRequestLogStore.insertMany on a SQLite file (rows posted to the writer thread)', () => {
  let directory: string;
  let path: string;
  let main: SqliteDatabase;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'insert-records-'));
    path = join(directory, 'gateway.db');
    main = await openBetterSqlite3(path, 5_000);
    main.pragma('journal_mode = WAL');
    migrateSqlite(main, sqliteMigrations);
  });

  afterEach(async () => {
    main.close();
    await rm(directory, { recursive: true, force: true });
  });

  const stored = (): unknown[] =>
    main
      .prepare('SELECT request_id, user_path_lower, status_class, attempts_json, rate_limit_json, cache_hit FROM request_log ORDER BY ts')
      .all();
  const entries = [
    requestLogEntry({ id: 'served', userPath: '/Team/App' }),
    requestLogEntry({
      id: 'limited',
      status: 429,
      attempts: [],
      rateLimit: { scope: 'user_path', subject: '/Team', period: 'minute', kind: 'requests' },
      cacheHit: true,
    }),
  ];
  const expected = [
    {
      request_id: 'served',
      user_path_lower: '/team/app',
      status_class: 2,
      attempts_json: '[{"provider":"openai","model":"gpt-4o-mini","status":200,"latencyMs":12.5,"errorCode":null}]',
      rate_limit_json: null,
      cache_hit: 0,
    },
    {
      request_id: 'limited',
      user_path_lower: '/team/app',
      status_class: 4,
      attempts_json: '[]',
      rate_limit_json: '{"scope":"user_path","subject":"/Team","period":"minute","kind":"requests"}',
      cache_hit: 1,
    },
  ];

  it('posts the rows to the writer thread, which writes the same rows as the main connection would', async () => {
    const writer = new SqliteWriter({ path, busyTimeoutMs: 5_000 });
    await new SqlRequestLogStore(new SqliteExecutor(main, writer)).insertMany(entries);
    expect(writer.running).toBe(true);
    expect(stored()).toEqual(expected);
    await writer.close();
  });

  it('writes the rows on the main connection when the thread is unavailable', async () => {
    const executor = new SqliteExecutor(main, new SqliteWriter({ path: join(directory, 'missing', 'x.db'), busyTimeoutMs: 5_000 }));
    await new SqlRequestLogStore(executor).insertMany(entries);
    expect(stored()).toEqual(expected);
  });
});
