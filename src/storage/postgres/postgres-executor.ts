import type { Pool } from 'pg';
import type { SqlExecutor, SqlValue } from '../sql/sql-executor.ts';
import { inPgTransaction } from './pg-transaction.ts';

/** Rows per multi-row INSERT; also bounded by PostgreSQL's 65,535 parameters per statement. */
const maximumRowsPerInsert = 500;
const maximumParameters = 65_535;
const pingTimeoutMs = 2_000;

/** SqlExecutor over a `pg` Pool. */
export class PostgresExecutor implements SqlExecutor {
  readonly dialect = 'postgresql';
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  placeholder(position: number): string {
    return `$${position}`;
  }

  async query<Row>(text: string, values: readonly SqlValue[] = []): Promise<Row[]> {
    return (await this.#pool.query(text, [...values])).rows as Row[];
  }

  async execute(text: string, values: readonly SqlValue[] = []): Promise<number> {
    return (await this.#pool.query(text, [...values])).rowCount ?? 0;
  }

  async insertRows(table: string, columns: readonly string[], rows: readonly (readonly SqlValue[])[]): Promise<void> {
    const rowsPerStatement = Math.max(1, Math.min(maximumRowsPerInsert, Math.floor(maximumParameters / columns.length)));
    await inPgTransaction(this.#pool, async (client) => {
      for (let start = 0; start < rows.length; start += rowsPerStatement) {
        const chunk = rows.slice(start, start + rowsPerStatement);
        await client.query(multiRowInsert(table, columns, chunk.length), chunk.flat());
      }
    });
  }

  async ping(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), pingTimeoutMs);
    });
    const round = this.#pool.query('SELECT 1 AS ok').then(
      (result) => result.rows.length === 1,
      () => false,
    );
    try {
      return await Promise.race([round, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}

/** `INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4), ...` for `rowCount` rows. */
function multiRowInsert(table: string, columns: readonly string[], rowCount: number): string {
  const tuples: string[] = [];
  for (let row = 0; row < rowCount; row += 1) {
    const offset = row * columns.length;
    tuples.push(`(${columns.map((_, column) => `$${offset + column + 1}`).join(', ')})`);
  }
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`;
}
