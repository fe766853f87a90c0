/** A value bound to a statement parameter. Booleans are stored natively or as 0/1, by dialect. */
export type SqlValue = string | number | boolean | null;

/** The little a SQL store needs from a database: one implementation per dialect. */
export interface SqlExecutor {
  readonly dialect: 'sqlite' | 'postgresql';
  /** The placeholder for the parameter at `position` (1-based): `?` or `$n`. */
  placeholder(position: number): string;
  /** Runs a statement that returns rows (SELECT, or a write with RETURNING). */
  query<Row>(text: string, values?: readonly SqlValue[]): Promise<Row[]>;
  /** Runs a write; resolves to the number of affected rows. */
  execute(text: string, values?: readonly SqlValue[]): Promise<number>;
  /** Inserts every row in one transaction; all or nothing. */
  insertRows(table: string, columns: readonly string[], rows: readonly (readonly SqlValue[])[]): Promise<void>;
  /** Cheap round trip; false when the database does not answer. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** Collects parameter values and hands out their placeholders in order. */
export class SqlParameters {
  readonly values: SqlValue[] = [];
  readonly #placeholder: (position: number) => string;

  constructor(executor: Pick<SqlExecutor, 'placeholder'>) {
    this.#placeholder = (position) => executor.placeholder(position);
  }

  add(value: SqlValue): string {
    this.values.push(value);
    return this.#placeholder(this.values.length);
  }
}

/** PostgreSQL returns BIGINT, NUMERIC and COUNT(*) as strings; SQLite returns numbers. */
export function toNumber(value: number | string | bigint): number {
  return typeof value === 'number' ? value : Number(value);
}

export function toNullableNumber(value: number | string | bigint | null): number | null {
  return value === null ? null : toNumber(value);
}

/** PostgreSQL returns booleans; SQLite returns 0/1. */
export function toBoolean(value: boolean | number): boolean {
  return typeof value === 'boolean' ? value : value !== 0;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
