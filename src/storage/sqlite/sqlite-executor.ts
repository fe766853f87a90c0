import type { SqlExecutor, SqlValue } from '../sql/sql-executor.ts';
import type { SqliteDatabase, SqliteStatement } from './better-sqlite3-driver.ts';
import { cachedStatement, insertRowsNow, toSqliteValue, type StatementCache } from './insert-rows.ts';
import { SqliteWriterUnavailable, type SqliteWriter } from './sqlite-writer.ts';

/**
 * SqlExecutor over better-sqlite3. Queries are synchronous (wrapped in resolved promises).
 * Batch inserts (usage records) go to the writer thread when there is one, so that their
 * B-tree work leaves the event loop; without one (`:memory:`, or a thread that failed) they
 * run here. Prepared statements are cached per SQL text.
 */
export class SqliteExecutor implements SqlExecutor {
  readonly dialect = 'sqlite';
  readonly #database: SqliteDatabase;
  readonly #writer: SqliteWriter | null;
  readonly #statements: StatementCache = new Map();

  constructor(database: SqliteDatabase, writer: SqliteWriter | null = null) {
    this.#database = database;
    this.#writer = writer;
  }

  placeholder(): string {
    return '?';
  }

  async query<Row>(text: string, values: readonly SqlValue[] = []): Promise<Row[]> {
    return this.#statement(text).all(...values.map(toSqliteValue)) as Row[];
  }

  async execute(text: string, values: readonly SqlValue[] = []): Promise<number> {
    return this.#statement(text).run(...values.map(toSqliteValue)).changes;
  }

  async insertRows(table: string, columns: readonly string[], rows: readonly (readonly SqlValue[])[]): Promise<void> {
    let threadFailed = false;
    if (this.#writer !== null) {
      try {
        return await this.#writer.insertRows(table, columns, rows);
      } catch (error) {
        if (!(error instanceof SqliteWriterUnavailable)) throw error;
        threadFailed = true;
      }
    }
    // After a thread failure the batch may already be committed (the thread died before it
    // answered): rows whose key exists are skipped rather than failing the batch forever.
    insertRowsNow(this.#database, this.#statements, table, columns, rows, threadFailed);
  }

  async ping(): Promise<boolean> {
    try {
      return this.#database.open && this.#statement('SELECT 1 AS ok').all().length === 1;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.#writer?.close();
    this.#statements.clear();
    if (this.#database.open) this.#database.close();
  }

  #statement(text: string): SqliteStatement {
    return cachedStatement(this.#database, this.#statements, text);
  }
}
