import { describe, expect, it } from 'vitest';
import { openBetterSqlite3 } from './better-sqlite3-driver.ts';
import { insertBatchesNow, type StatementCache } from './insert-rows.ts';

describe('insertBatchesNow (one transaction; each batch alone after a failure)', () => {
  it('commits every batch that succeeds and nothing of one that fails', async () => {
    const database = await openBetterSqlite3(':memory:', 1_000);
    database.exec('CREATE TABLE a (id TEXT PRIMARY KEY); CREATE TABLE b (id TEXT PRIMARY KEY)');
    const statements: StatementCache = new Map();
    const errors = insertBatchesNow(database, statements, [
      { table: 'a', columns: ['id'], rows: [['1'], ['1']] },
      { table: 'b', columns: ['id'], rows: [['x'], ['y']] },
    ]);
    expect(errors[0]).toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(errors[1]).toBeNull();
    expect(database.prepare('SELECT (SELECT COUNT(*) FROM a) AS a, (SELECT COUNT(*) FROM b) AS b').all()).toEqual([{ a: 0, b: 2 }]);
    database.close();
  });

  it('commits nothing twice when the joint commit fails: each batch is then tried alone', async () => {
    const database = await openBetterSqlite3(':memory:', 1_000);
    database.exec('CREATE TABLE a (id TEXT PRIMARY KEY)');
    const statements: StatementCache = new Map();
    // A deferred foreign key is checked at COMMIT: the commit fails, after both batches ran.
    database.exec('PRAGMA foreign_keys = ON; CREATE TABLE c (id TEXT REFERENCES a (id) DEFERRABLE INITIALLY DEFERRED)');
    const errors = insertBatchesNow(database, statements, [
      { table: 'a', columns: ['id'], rows: [['1']] },
      { table: 'c', columns: ['id'], rows: [['missing']] },
    ]);
    expect(errors[0]).toBeNull();
    expect(errors[1]).toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
    expect(database.prepare('SELECT (SELECT COUNT(*) FROM a) AS a, (SELECT COUNT(*) FROM c) AS c').all()).toEqual([{ a: 1, c: 0 }]);
    database.close();
  });
});
