import type { FastifyInstance } from 'fastify';
import { normalizeUserPathOrThrow } from '../auth/user-path-header.ts';
import type { UsageBucket, UsageGroupBy, UsageQuery, UsageStore, UsageTotals } from '../usage/usage-store.ts';
import { featureUnavailable, invalidParameter, isoTime, queryText } from './admin-errors.ts';
import { parseTimeRange } from './time-range.ts';
import type { AnswerOf, usageReportSchema, usageTotalsSchema } from './schemas/answers.ts';

const groupings: readonly UsageGroupBy[] = ['user_path', 'provider', 'model', 'day', 'api_key'];
const buckets: readonly UsageBucket[] = ['hour', 'day'];

/** The optional `bucket` (a time series per group key, for the dashboard's charts). */
function readBucket(value: unknown): UsageBucket | undefined {
  if (value === undefined || value === '') return undefined;
  if (!buckets.includes(value as UsageBucket)) throw invalidParameter('bucket', `bucket must be one of ${buckets.join(', ')}`);
  return value as UsageBucket;
}

/**
 * A group's totals as the API shows them. `cost_usd` is null as soon as one record of the group
 * has no known price (a sum of the priced ones would read as the whole cost); `unpriced_requests`
 * says how many records that is.
 */
export function renderTotals(totals: UsageTotals): AnswerOf<typeof usageTotalsSchema> {
  return {
    requests: totals.requests,
    prompt_tokens: totals.promptTokens,
    completion_tokens: totals.completionTokens,
    total_tokens: totals.totalTokens,
    cost_usd: totals.unpricedRequests > 0 ? null : Math.round(totals.costUsd * 1e10) / 1e10,
    unpriced_requests: totals.unpricedRequests,
  };
}

/** Reads `from`, `to`, `user_path`, `provider`, `model` from a query string. */
export function readUsageQuery(query: Record<string, unknown>, now: number): UsageQuery {
  const range = parseTimeRange(query, now);
  const text = (name: string): string | undefined => queryText(query, name);
  const userPath = text('user_path');
  const provider = text('provider');
  const model = text('model');
  return {
    ...range,
    ...(userPath === undefined ? {} : { userPath: normalizeUserPathOrThrow(userPath, 'user_path') }),
    ...(provider === undefined ? {} : { provider }),
    ...(model === undefined ? {} : { model }),
  };
}

/**
 * `GET /admin/usage` (CONTRACT section 7). With `bucket=hour|day` the rows are a series: one
 * per time bucket and key, each with `bucket` (the bucket's start, RFC 3339), ordered by time.
 */
export function registerUsageRoutes(app: FastifyInstance, usage: UsageStore | null): void {
  app.get('/admin/usage', async (request): Promise<AnswerOf<typeof usageReportSchema>> => {
    if (usage === null) throw featureUnavailable('usage tracking', 'USAGE_ENABLED');
    const query = request.query as Record<string, unknown>;
    const groupBy = (query['group_by'] ?? 'day') as UsageGroupBy;
    if (!groupings.includes(groupBy)) throw invalidParameter('group_by', `group_by must be one of ${groupings.join(', ')}`);
    const bucket = readBucket(query['bucket']);
    const usageQuery = readUsageQuery(query, Date.now());
    const rows = await usage.summarize(usageQuery, groupBy, bucket);
    return {
      from: isoTime(usageQuery.from),
      to: isoTime(usageQuery.to),
      group_by: groupBy,
      ...(bucket === undefined ? {} : { bucket }),
      rows: rows.map((row) => ({
        ...(row.bucket === undefined ? {} : { bucket: isoTime(row.bucket) }),
        // Requests made without an API key (master key, open gateway) group under a null key.
        key: groupBy === 'api_key' && row.key === '' ? null : row.key,
        ...renderTotals(row),
      })),
    };
  });
}
