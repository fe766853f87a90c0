import type { RateLimitRuleRow, RateLimitRuleStore, RateLimitScope } from '../../ratelimit/rule-store.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlParameters, toNullableNumber, toNumber } from './sql-executor.ts';

const ruleColumns = 'scope, subject, period_seconds, max_requests, max_tokens, created_at, updated_at';

interface RateLimitRuleTableRow {
  readonly scope: RateLimitScope;
  readonly subject: string;
  readonly period_seconds: number | string;
  readonly max_requests: number | string | null;
  readonly max_tokens: number | string | null;
  readonly created_at: number | string;
  readonly updated_at: number | string;
}

/** RateLimitRuleStore over any SQL dialect. Identity: (scope, lower-cased subject, period seconds). */
export class SqlRateLimitRuleStore implements RateLimitRuleStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async list(): Promise<RateLimitRuleRow[]> {
    const rows = await this.#executor.query<RateLimitRuleTableRow>(
      `SELECT ${ruleColumns} FROM rate_limit_rules ORDER BY scope, subject_lower, period_seconds`,
    );
    return rows.map(ruleFromRow);
  }

  /** Replaces spelling, caps and updatedAt of an existing rule (a cap may go back to NULL); keeps its createdAt. */
  async upsert(row: RateLimitRuleRow): Promise<void> {
    const parameters = new SqlParameters(this.#executor);
    const values = [
      row.scope,
      row.subject,
      row.subject.toLowerCase(),
      row.periodSeconds,
      row.maxRequests,
      row.maxTokens,
      row.createdAt,
      row.updatedAt,
    ]
      .map((value) => parameters.add(value))
      .join(', ');
    const text = `INSERT INTO rate_limit_rules
        (scope, subject, subject_lower, period_seconds, max_requests, max_tokens, created_at, updated_at)
      VALUES (${values})
      ON CONFLICT (scope, subject_lower, period_seconds) DO UPDATE SET
        subject = excluded.subject, max_requests = excluded.max_requests, max_tokens = excluded.max_tokens,
        updated_at = excluded.updated_at`;
    await this.#executor.execute(text, parameters.values);
  }

  async remove(scope: RateLimitScope, subject: string, periodSeconds: number): Promise<boolean> {
    const parameters = new SqlParameters(this.#executor);
    const text = `DELETE FROM rate_limit_rules WHERE scope = ${parameters.add(scope)}
      AND subject_lower = ${parameters.add(subject.toLowerCase())} AND period_seconds = ${parameters.add(periodSeconds)}`;
    return (await this.#executor.execute(text, parameters.values)) > 0;
  }
}

function ruleFromRow(row: RateLimitRuleTableRow): RateLimitRuleRow {
  return {
    scope: row.scope,
    subject: row.subject,
    periodSeconds: toNumber(row.period_seconds),
    maxRequests: toNullableNumber(row.max_requests),
    maxTokens: toNullableNumber(row.max_tokens),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}
