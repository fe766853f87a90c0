import type { FastifyInstance } from 'fastify';
import { normalizeUserPathOrThrow } from '../http/user-path.ts';
import type { UsageGroupBy, UsageQuery, UsageStore, UsageTotals } from '../usage/usage-store.ts';
import { featureUnavailable, invalidParameter, isoTime } from './admin-errors.ts';
import { parseTimeRange } from './time-range.ts';

const groupings: readonly UsageGroupBy[] = ['user_path', 'provider', 'model', 'day'];

export function renderTotals(totals: UsageTotals) {
  return {
    requests: totals.requests,
    prompt_tokens: totals.promptTokens,
    completion_tokens: totals.completionTokens,
    total_tokens: totals.totalTokens,
    cost_usd: Math.round(totals.costUsd * 1e10) / 1e10,
  };
}

/** Reads `from`, `to`, `user_path`, `provider`, `model` from a query string. */
export function readUsageQuery(query: Record<string, unknown>, now: number): UsageQuery {
  const range = parseTimeRange(query, now);
  const text = (name: string): string | undefined => {
    const value = query[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') throw invalidParameter(name, `\`${name}\` must be given once`);
    return value;
  };
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

/** `GET /admin/usage` (CONTRACT section 7). */
export function registerUsageRoutes(app: FastifyInstance, usage: UsageStore | null): void {
  app.get('/admin/usage', async (request) => {
    if (usage === null) throw featureUnavailable('usage tracking', 'USAGE_ENABLED');
    const query = request.query as Record<string, unknown>;
    const groupBy = (query['group_by'] ?? 'day') as UsageGroupBy;
    if (!groupings.includes(groupBy)) throw invalidParameter('group_by', `group_by must be one of ${groupings.join(', ')}`);
    const usageQuery = readUsageQuery(query, Date.now());
    const rows = await usage.summarize(usageQuery, groupBy);
    return {
      from: isoTime(usageQuery.from),
      to: isoTime(usageQuery.to),
      group_by: groupBy,
      rows: rows.map((row) => ({ key: row.key, ...renderTotals(row) })),
    };
  });
}
