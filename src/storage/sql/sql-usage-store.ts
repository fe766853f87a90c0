import type { UsageBucket, UsageGroup, UsageGroupBy, UsageQuery, UsageRecord, UsageStore, UsageTotals } from '../../usage/usage-store.ts';
import { usageBucketMilliseconds } from '../../usage/usage-store.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlParameters, toNumber } from './sql-executor.ts';
import type { UsageRow } from './usage-row.ts';
import { usageColumns, usageRecordFromRow, usageRowValues } from './usage-row.ts';
import { userPathSubtreeCondition } from './user-path-subtree.ts';

const millisecondsPerDay = 86_400_000;

/**
 * Group keys. `day` groups by the UTC day number (integer division truncates, which is the floor
 * for times after 1970) and is formatted as `YYYY-MM-DD` afterwards, so both dialects agree.
 */
const groupKeyExpressions: Record<UsageGroupBy, string> = {
  user_path: 'user_path_lower',
  provider: 'provider',
  model: 'model',
  day: `ts / ${millisecondsPerDay}`,
  api_key: "COALESCE(api_key_id, '')",
};

const totalsSelect = `COUNT(*) AS requests,
  COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens,
  COALESCE(SUM(completion_tokens), 0) AS completion_tokens,
  COALESCE(SUM(total_tokens), 0) AS total_tokens,
  COALESCE(SUM(cost_usd), 0) AS cost_usd,
  COALESCE(SUM(CASE WHEN cost_usd IS NULL THEN 1 ELSE 0 END), 0) AS unpriced_requests`;

interface TotalsRow {
  readonly requests: number | string;
  readonly prompt_tokens: number | string;
  readonly completion_tokens: number | string;
  readonly total_tokens: number | string;
  readonly cost_usd: number | string;
  readonly unpriced_requests: number | string;
}

const emptyTotalsRow: TotalsRow = {
  requests: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  cost_usd: 0,
  unpriced_requests: 0,
};

interface GroupRow extends TotalsRow {
  readonly group_key: string | number;
  /** The bucket number (time / bucket size, truncated) when a bucket was asked for. */
  readonly bucket_key?: string | number;
}

/** UsageStore over any SQL dialect; the executor hides the driver. */
export class SqlUsageStore implements UsageStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async insertMany(records: readonly UsageRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.#executor.insertRows('usage_records', usageColumns, records.map(usageRowValues));
  }

  async summarize(query: UsageQuery, groupBy: UsageGroupBy, bucket?: UsageBucket): Promise<UsageGroup[]> {
    const parameters = new SqlParameters(this.#executor);
    const where = usageWhere(query, parameters);
    // Bucket sizes are constants of our own (never user text), like the day expression above.
    const size = bucket === undefined ? null : usageBucketMilliseconds[bucket];
    const bucketSelect = size === null ? '' : `ts / ${size} AS bucket_key, `;
    const order = size === null ? 'group_key' : 'bucket_key, group_key';
    const text = `SELECT ${bucketSelect}${groupKeyExpressions[groupBy]} AS group_key, ${totalsSelect}
      FROM usage_records WHERE ${where} GROUP BY ${order} ORDER BY ${order}`;
    const rows = await this.#executor.query<GroupRow>(text, parameters.values);
    return rows.map((row) => ({
      key: groupKey(row.group_key, groupBy),
      ...(size === null || row.bucket_key === undefined ? {} : { bucket: toNumber(row.bucket_key) * size }),
      ...totalsFromRow(row),
    }));
  }

  async totals(query: UsageQuery): Promise<UsageTotals> {
    const parameters = new SqlParameters(this.#executor);
    const where = usageWhere(query, parameters);
    const rows = await this.#executor.query<TotalsRow>(`SELECT ${totalsSelect} FROM usage_records WHERE ${where}`, parameters.values);
    return totalsFromRow(rows[0] ?? emptyTotalsRow);
  }

  async findByRequestId(requestId: string): Promise<UsageRecord[]> {
    const parameters = new SqlParameters(this.#executor);
    const text = `SELECT ${usageColumns.join(', ')} FROM usage_records WHERE request_id = ${parameters.add(requestId)} ORDER BY ts, id`;
    const rows = await this.#executor.query<UsageRow>(text, parameters.values);
    return rows.map(usageRecordFromRow);
  }
}

/** The WHERE clause of a usage query: time bounds, then the optional filters. */
export function usageWhere(query: UsageQuery, parameters: SqlParameters): string {
  const conditions = [`ts >= ${parameters.add(query.from)}`, `ts < ${parameters.add(query.to)}`];
  const subtree = query.userPath === undefined ? null : userPathSubtreeCondition(query.userPath, parameters);
  if (subtree !== null) conditions.push(subtree);
  if (query.provider !== undefined) conditions.push(`provider = ${parameters.add(query.provider)}`);
  if (query.model !== undefined) conditions.push(`model = ${parameters.add(query.model)}`);
  return conditions.join(' AND ');
}

function groupKey(value: string | number, groupBy: UsageGroupBy): string {
  if (groupBy !== 'day') return String(value);
  return new Date(toNumber(value) * millisecondsPerDay).toISOString().slice(0, 10);
}

function totalsFromRow(row: TotalsRow): UsageTotals {
  return {
    requests: toNumber(row.requests),
    promptTokens: toNumber(row.prompt_tokens),
    completionTokens: toNumber(row.completion_tokens),
    totalTokens: toNumber(row.total_tokens),
    costUsd: toNumber(row.cost_usd),
    unpricedRequests: toNumber(row.unpriced_requests),
  };
}
