import type Database from 'better-sqlite3';

/** A value better-sqlite3 can bind (it rejects booleans). */
export type SqliteValue = string | number | bigint | Buffer | null;

export interface SqliteStatement {
  /** True when the statement returns rows (SELECT, RETURNING). */
  readonly reader: boolean;
  run(...values: SqliteValue[]): { readonly changes: number };
  all(...values: SqliteValue[]): unknown[];
}

/** A transaction function; `immediate` takes the write lock before running (BEGIN IMMEDIATE). */
export interface SqliteTransaction<Arguments extends unknown[], Result> {
  (...values: Arguments): Result;
  immediate(...values: Arguments): Result;
}

/**
 * The part of better-sqlite3's Database the stores use. Kept small on purpose: `node:sqlite`
 * (Node 22+) can be adapted to it later without touching the stores.
 */
export interface SqliteDatabase {
  readonly open: boolean;
  prepare(source: string): SqliteStatement;
  exec(source: string): unknown;
  pragma(source: string, options?: { readonly simple?: boolean }): unknown;
  transaction<Arguments extends unknown[], Result>(body: (...values: Arguments) => Result): SqliteTransaction<Arguments, Result>;
  close(): unknown;
}

type BetterSqlite3 = Database.Database;
type BetterSqlite3Statement = Database.Statement;

/**
 * Every database opened in this thread, with the statements made on it: held until the thread
 * exits, so that V8's garbage collector never finalizes a better-sqlite3 object.
 *
 * better-sqlite3 12 wraps its objects in `node::ObjectWrap`. Compiled against Node 24.19 or
 * later headers, ObjectWrap's destructor calls `node::RemoveEnvironmentCleanupHook`, which
 * aborts the process (`Assertion failed: (env) != nullptr`, SIGABRT) when V8 runs it with no
 * JavaScript context entered: a collection that a builtin's allocation starts (it runs the
 * runtime with no context), while finalizing a Statement that had become garbage. The gateway
 * died at start that way, the statements of the migrations and of `pragma()` being the garbage.
 * Objects that are never garbage are deleted only by Node's cleanup at the thread's exit, with
 * the context entered. better-sqlite3 13 (Node-API) does not have the problem, but needs Node
 * 22. Statements are shared by SQL text (so the set stays bounded); a database is a few hundred
 * bytes once closed.
 */
const pinned: Array<{ readonly database: BetterSqlite3; readonly statements: Map<string, BetterSqlite3Statement> }> = [];

class PinnedDatabase implements SqliteDatabase {
  readonly #database: BetterSqlite3;
  readonly #statements = new Map<string, BetterSqlite3Statement>();

  constructor(database: BetterSqlite3) {
    this.#database = database;
    pinned.push({ database, statements: this.#statements });
  }

  get open(): boolean {
    return this.#database.open;
  }

  prepare(source: string): BetterSqlite3Statement {
    return this.#statement(source, source);
  }

  exec(source: string): unknown {
    return this.#database.exec(source);
  }

  /** As better-sqlite3's `pragma`, through a held statement (its own makes one a call). */
  pragma(source: string, options?: { readonly simple?: boolean }): unknown {
    const simple = options?.simple === true;
    const text = `PRAGMA ${source}`;
    const statement = this.#statement(simple ? `simple\u0000${text}` : text, text);
    if (!statement.reader) {
      statement.run();
      return simple ? undefined : [];
    }
    return simple ? statement.pluck().get() : statement.all();
  }

  transaction<Arguments extends unknown[], Result>(body: (...values: Arguments) => Result): SqliteTransaction<Arguments, Result> {
    return this.#database.transaction(body);
  }

  close(): unknown {
    return this.#database.close();
  }

  #statement(key: string, source: string): BetterSqlite3Statement {
    let statement = this.#statements.get(key);
    if (statement === undefined) {
      statement = this.#database.prepare(source);
      this.#statements.set(key, statement);
    }
    return statement;
  }
}

/**
 * Opens a better-sqlite3 database. Imported on first use, so that a PostgreSQL deployment never
 * loads the native module. The database and its statements are never garbage (`pinned`).
 */
export async function openBetterSqlite3(path: string, busyTimeoutMs: number): Promise<SqliteDatabase> {
  const { default: Sqlite3 } = await import('better-sqlite3');
  return new PinnedDatabase(new Sqlite3(path, { timeout: busyTimeoutMs }));
}
