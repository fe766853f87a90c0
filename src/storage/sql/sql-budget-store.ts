import type { BudgetRow, BudgetStore, SpendSlice } from '../../budgets/budget-store.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlParameters, toNumber } from './sql-executor.ts';
import { userPathSubtreeCondition } from './user-path-subtree.ts';

const budgetColumns = 'user_path, period, period_seconds, amount, created_at, updated_at';

interface BudgetTableRow {
  readonly user_path: string;
  readonly period: string;
  readonly period_seconds: number | string;
  readonly amount: number | string;
  readonly created_at: number | string;
  readonly updated_at: number | string;
}

/** BudgetStore over any SQL dialect. Identity: (lower-cased user path, period seconds). */
export class SqlBudgetStore implements BudgetStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async list(): Promise<BudgetRow[]> {
    const rows = await this.#executor.query<BudgetTableRow>(
      `SELECT ${budgetColumns} FROM budgets ORDER BY user_path_lower, period_seconds`,
    );
    return rows.map(budgetFromRow);
  }

  async upsert(row: BudgetRow): Promise<void> {
    const parameters = new SqlParameters(this.#executor);
    const values = [row.userPath, row.userPath.toLowerCase(), row.period, row.periodSeconds, row.amount, row.createdAt, row.updatedAt]
      .map((value) => parameters.add(value))
      .join(', ');
    const text = `INSERT INTO budgets (user_path, user_path_lower, period, period_seconds, amount, created_at, updated_at)
      VALUES (${values})
      ON CONFLICT (user_path_lower, period_seconds) DO UPDATE SET
        user_path = excluded.user_path, period = excluded.period, amount = excluded.amount, updated_at = excluded.updated_at`;
    await this.#executor.execute(text, parameters.values);
  }

  async remove(userPath: string, periodSeconds: number): Promise<boolean> {
    const parameters = new SqlParameters(this.#executor);
    const text = `DELETE FROM budgets WHERE user_path_lower = ${parameters.add(userPath.toLowerCase())}
      AND period_seconds = ${parameters.add(periodSeconds)}`;
    return (await this.#executor.execute(text, parameters.values)) > 0;
  }

  async spentSince(userPath: string, from: number, to?: number): Promise<number> {
    const parameters = new SqlParameters(this.#executor);
    const conditions = [`ts >= ${parameters.add(from)}`];
    if (to !== undefined) conditions.push(`ts < ${parameters.add(to)}`);
    const subtree = userPathSubtreeCondition(userPath, parameters);
    if (subtree !== null) conditions.push(subtree);
    const text = `SELECT COALESCE(SUM(cost_usd), 0) AS spent FROM usage_records WHERE ${conditions.join(' AND ')}`;
    const rows = await this.#executor.query<{ readonly spent: number | string }>(text, parameters.values);
    return toNumber(rows[0]?.spent ?? 0);
  }

  async spendBySecond(from: number): Promise<SpendSlice[]> {
    const parameters = new SqlParameters(this.#executor);
    // Integer division in both dialects (BIGINT / INTEGER); timestamps are after 1970, so it floors.
    const text = `SELECT user_path_lower AS path, ts / 1000 AS second, SUM(cost_usd) AS cost FROM usage_records
      WHERE ts >= ${parameters.add(from)} AND cost_usd IS NOT NULL GROUP BY user_path_lower, ts / 1000`;
    const rows = await this.#executor.query<{ readonly path: string; readonly second: number | string; readonly cost: number | string }>(
      text,
      parameters.values,
    );
    return rows.map((row) => ({ userPath: row.path, second: toNumber(row.second), cost: toNumber(row.cost) }));
  }
}

function budgetFromRow(row: BudgetTableRow): BudgetRow {
  return {
    userPath: row.user_path,
    period: row.period,
    periodSeconds: toNumber(row.period_seconds),
    amount: toNumber(row.amount),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}
