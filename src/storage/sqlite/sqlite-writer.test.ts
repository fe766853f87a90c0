import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openBetterSqlite3, type SqliteDatabase } from './better-sqlite3-driver.ts';
import { SqliteExecutor } from './sqlite-executor.ts';
import { SqliteWriter, SqliteWriterUnavailable } from './sqlite-writer.ts';

describe('SqliteWriter (batch inserts on a worker thread)', () => {
  let directory: string;
  let path: string;
  let main: SqliteDatabase;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'sqlite-writer-'));
    path = join(directory, 'gateway.db');
    main = await openBetterSqlite3(path, 5_000);
    main.pragma('journal_mode = WAL');
    main.exec('CREATE TABLE items (id TEXT PRIMARY KEY, amount INTEGER NOT NULL, flag INTEGER NOT NULL, note TEXT)');
  });

  afterEach(async () => {
    main.close();
    await rm(directory, { recursive: true, force: true });
  });

  const rowsOf = (database: SqliteDatabase): unknown[] => database.prepare('SELECT * FROM items ORDER BY id').all();

  it('inserts batches that the main connection reads as soon as they are acknowledged', async () => {
    const writer = new SqliteWriter({ path, busyTimeoutMs: 5_000 });
    await writer.insertRows(
      'items',
      ['id', 'amount', 'flag', 'note'],
      [
        ['a', 1, true, 'ü ✓'],
        ['b', 2, false, null],
      ],
    );
    expect(writer.running).toBe(true);
    expect(rowsOf(main)).toEqual([
      { id: 'a', amount: 1, flag: 1, note: 'ü ✓' },
      { id: 'b', amount: 2, flag: 0, note: null },
    ]);
    await writer.close();
  });

  it('rejects a failing batch with SQLite code and message, whole (no row of it written), and keeps working', async () => {
    const writer = new SqliteWriter({ path, busyTimeoutMs: 5_000 });
    const columns = ['id', 'amount', 'flag', 'note'];
    const failed = writer.insertRows('items', columns, [
      ['x', 1, true, null],
      ['x', 2, true, null],
    ]);
    await expect(failed).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY', message: expect.stringMatching(/UNIQUE/) });
    expect(rowsOf(main)).toEqual([]);
    await writer.insertRows('items', columns, [['y', 3, false, null]]);
    expect(rowsOf(main)).toHaveLength(1);
    await writer.close();
  });

  it('commits the batches of one turn together, each settled on its own: a failing one leaves the others written', async () => {
    const writer = new SqliteWriter({ path, busyTimeoutMs: 5_000 });
    const columns = ['id', 'amount', 'flag', 'note'];
    main.exec('CREATE TABLE others (id TEXT PRIMARY KEY)');
    const first = writer.insertRows('items', columns, [['a', 1, true, null]]);
    const failing = writer.insertRows('others', ['id'], [['o'], ['o']]);
    const last = writer.insertRows('items', columns, [['b', 2, false, null]]);
    await expect(failing).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    await Promise.all([first, last]);
    expect(rowsOf(main)).toEqual([
      { id: 'a', amount: 1, flag: 1, note: null },
      { id: 'b', amount: 2, flag: 0, note: null },
    ]);
    expect(main.prepare('SELECT COUNT(*) AS n FROM others').all()).toEqual([{ n: 0 }]);
    await writer.close();
  });

  it('finishes the batches already posted before close resolves', async () => {
    const writer = new SqliteWriter({ path, busyTimeoutMs: 5_000 });
    const batches = Array.from({ length: 20 }, (_unused, batch) =>
      writer.insertRows(
        'items',
        ['id', 'amount', 'flag', 'note'],
        Array.from({ length: 50 }, (_row, index) => [
          `${String(batch).padStart(2, '0')}-${String(index).padStart(2, '0')}`,
          index,
          true,
          null,
        ]),
      ),
    );
    await writer.insertRows('items', ['id', 'amount', 'flag', 'note'], [['zz', 0, false, null]]);
    const closed = writer.close();
    await Promise.all(batches);
    await closed;
    expect(rowsOf(main)).toHaveLength(1001);
    await expect(writer.insertRows('items', ['id'], [['late']])).rejects.toBeInstanceOf(SqliteWriterUnavailable);
  });

  it('reports a thread that cannot open its database as unavailable; the executor then writes on its own connection', async () => {
    const broken = new SqliteWriter({ path: join(directory, 'missing', 'dir', 'x.db'), busyTimeoutMs: 5_000 });
    await expect(broken.insertRows('items', ['id'], [['a']])).rejects.toBeInstanceOf(SqliteWriterUnavailable);

    const executor = new SqliteExecutor(main, new SqliteWriter({ path: join(directory, 'missing', 'dir', 'x.db'), busyTimeoutMs: 5_000 }));
    await executor.insertRows('items', ['id', 'amount', 'flag'], [['fallback', 7, true]]);
    expect(rowsOf(main)).toEqual([{ id: 'fallback', amount: 7, flag: 1, note: null }]);
  });

  it('keeps the process up while an insert waits for the thread to start (the last flush at shutdown)', async () => {
    const fixture = new URL('../../../test/support/sqlite-writer-exit.ts', import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', fixture, path], { timeout: 60_000 });
    expect(stdout).toBe('inserted\n');
    expect(rowsOf(main)).toEqual([{ id: 'at-exit', amount: 1, flag: 1, note: null }]);
  });

  it('closes at once when its thread has died, and the executor then skips rows the thread had committed', async () => {
    const writer = new SqliteWriter({ path, busyTimeoutMs: 5_000 });
    const columns = ['id', 'amount', 'flag', 'note'];
    await writer.insertRows('items', columns, [['committed', 1, true, null]]);
    await writer.terminate(); // as if it crashed right after that commit
    expect(writer.running).toBe(false);
    const closed = await Promise.race([writer.close().then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 2_000, 'hung'))]);
    expect(closed).toBe('closed');

    const executor = new SqliteExecutor(main, writer);
    await executor.insertRows('items', columns, [
      ['committed', 1, true, null],
      ['new', 2, false, null],
    ]);
    expect(rowsOf(main)).toEqual([
      { id: 'committed', amount: 1, flag: 1, note: null },
      { id: 'new', amount: 2, flag: 0, note: null },
    ]);
  });
});
