/** A manual budget rule as stored. Identity: (lower-cased user path, period seconds). */
export interface BudgetRow {
  /** Normalised user path (case kept). */
  readonly userPath: string;
  /** `hourly`, `daily`, `weekly`, `monthly` or `custom`. */
  readonly period: string;
  /** 3600, 86400, 604800, 2592000 for `monthly` (calendar month), or the custom length. */
  readonly periodSeconds: number;
  /** USD. */
  readonly amount: number;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Durable manual budget rules. Implementations: SQLite and PostgreSQL (src/storage/). */
export interface BudgetStore {
  list(): Promise<BudgetRow[]>;
  /** Inserts or replaces the rule with the same identity (keeps its `createdAt`). */
  upsert(row: BudgetRow): Promise<void>;
  /** Removes the rule; false when there was none. */
  remove(userPath: string, periodSeconds: number): Promise<boolean>;
  /**
   * Sum of known costs of usage whose user path is `userPath` or below it (case-insensitive),
   * with `from <= timestamp` (and `timestamp < to` when given), in USD.
   */
  spentSince(userPath: string, from: number, to?: number): Promise<number>;
  /**
   * Known costs with `from <= timestamp`, summed per lower-cased user path and whole second of
   * the timestamp: how a replica follows the spend other replicas write, with one cheap query
   * over the last minute instead of a sum over each budget's whole period.
   */
  spendBySecond(from: number): Promise<SpendSlice[]>;
}

/** The known cost of one user path (lower-cased) in one second. */
export interface SpendSlice {
  readonly userPath: string;
  /** Epoch seconds: the costs of timestamps in [second × 1000, second × 1000 + 1000). */
  readonly second: number;
  /** USD. */
  readonly cost: number;
}
