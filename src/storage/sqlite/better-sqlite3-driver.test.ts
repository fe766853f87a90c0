import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { openBetterSqlite3 } from './better-sqlite3-driver.ts';

/** V8's `gc()`, without starting the process with --expose-gc. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('openBetterSqlite3', () => {
  // Built against Node >= 24.19 headers, better-sqlite3 12 aborts the process when the GC
  // finalizes one of its objects outside a JavaScript context: none may ever be collected.
  it('never lets the garbage collector finalize a statement, even after close', async () => {
    const gc = collector();
    let finalized = 0;
    const registry = new FinalizationRegistry(() => (finalized += 1));
    await (async () => {
      const database = await openBetterSqlite3(':memory:', 1_000);
      for (let index = 0; index < 50; index += 1) registry.register(database.prepare(`SELECT ${index} AS n`), index);
      database.pragma('foreign_keys = ON');
      database.close();
    })();
    for (let round = 0; round < 3; round += 1) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(finalized).toBe(0);
  });

  it('shares a statement per SQL text, and answers pragmas as better-sqlite3 does', async () => {
    const database = await openBetterSqlite3(':memory:', 1_000);
    try {
      expect(database.prepare('SELECT 1 AS ok')).toBe(database.prepare('SELECT 1 AS ok'));
      expect(database.pragma('foreign_keys = ON')).toEqual([]);
      expect(database.pragma('foreign_keys = OFF', { simple: true })).toBeUndefined();
      expect(database.pragma('foreign_keys')).toEqual([{ foreign_keys: 0 }]);
      expect(database.pragma('foreign_keys = ON')).toEqual([]);
      expect(database.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(database.pragma('foreign_keys')).toEqual([{ foreign_keys: 1 }]);
      expect(database.pragma('busy_timeout = 250', { simple: true })).toBe(250);
      expect(database.pragma('journal_mode', { simple: true })).toBe('memory');
    } finally {
      database.close();
    }
  });
});
