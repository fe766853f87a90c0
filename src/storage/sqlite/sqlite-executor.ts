import type { SqlExecutor, SqlValue } from '../sql/sql-executor.ts';
import type { SqliteDatabase, SqliteStatement, SqliteValue } from './better-sqlite3-driver.ts';

/**
 * SqlExecutor over better-sqlite3. Calls are synchronous (wrapped in resolved promises): callers
 * batch writes off the request path. Prepared statements are cached per SQL text.
 */
export class SqliteExecutor implements SqlExecutor {
  readonly dialect = 'sqlite';
  readonly #database: SqliteDatabase;
  readonly #statements = new Map<string, SqliteStatement>();

  constructor(database: SqliteDatabase) {
    this.#database = database;
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
    const statement = this.#statement(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
    const insertAll = this.#database.transaction((batch: readonly (readonly SqlValue[])[]) => {
      for (const row of batch) statement.run(...row.map(toSqliteValue));
    });
    insertAll(rows);
  }

  async ping(): Promise<boolean> {
    try {
      return this.#database.open && this.#statement('SELECT 1 AS ok').all().length === 1;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.#statements.clear();
    if (this.#database.open) this.#database.close();
  }

  #statement(text: string): SqliteStatement {
    let statement = this.#statements.get(text);
    if (statement === undefined) {
      statement = this.#database.prepare(text);
      this.#statements.set(text, statement);
    }
    return statement;
  }
}

function toSqliteValue(value: SqlValue): SqliteValue {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}
