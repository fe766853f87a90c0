import type { FastifyInstance } from 'fastify';
import type { RequestLogStore, RequestStatsBucket, RequestStatsGroupBy, RequestStatsQuery } from '../request-log/request-log-store.ts';
import { featureUnavailable, invalidParameter, isoTime } from './admin-errors.ts';
import { parseTimeRange } from './time-range.ts';

const groupings: readonly RequestStatsGroupBy[] = ['provider', 'model'];
const buckets: readonly RequestStatsBucket[] = ['hour', 'day'];
const defaultSpan = 86_400_000;
/**
 * Stats read at most this many entries, the newest of the range: one page of charts stays
 * fast however many millions of rows the range holds (`truncated` says when it was cut).
 */
export const maxStatsRows = 100_000;

/**
 * `GET /admin/requests/stats?from&to&group_by=provider|model&bucket=hour|day`: per provider or
 * model (and time bucket) the request count, errors, error rate and p50/p95 latency, from the
 * request log. The range defaults to the last 24 hours.
 */
export function registerRequestStatsRoute(app: FastifyInstance, store: RequestLogStore | null): void {
  app.get('/admin/requests/stats', async (request) => {
    if (store === null) throw featureUnavailable('the request log', 'REQUEST_LOG_ENABLED');
    const query = readStatsQuery(request.query as Record<string, unknown>, Date.now());
    const stats = await store.stats(query);
    return {
      from: isoTime(query.from),
      to: isoTime(query.to),
      group_by: query.groupBy,
      ...(query.bucket === undefined ? {} : { bucket: query.bucket }),
      rows: stats.rows,
      oldest: isoTime(stats.oldest),
      truncated: stats.rows >= query.maxRows,
      groups: stats.groups.map((group) => ({
        ...(group.bucket === undefined ? {} : { bucket: isoTime(group.bucket) }),
        key: group.key,
        requests: group.requests,
        errors: group.errors,
        server_errors: group.serverErrors,
        error_rate: group.requests === 0 ? 0 : Math.round((group.errors / group.requests) * 10_000) / 10_000,
        p50_latency_ms: group.p50LatencyMs,
        p95_latency_ms: group.p95LatencyMs,
      })),
    };
  });
}

/** The stats query; a value that cannot be one is a 400 naming its parameter. */
export function readStatsQuery(query: Record<string, unknown>, now: number): RequestStatsQuery {
  const given = (name: string): boolean => query[name] !== undefined && query[name] !== '';
  const range = parseTimeRange(query, now);
  const from = given('from') ? range.from : range.to - defaultSpan;
  const groupBy = given('group_by') ? query['group_by'] : 'provider';
  if (!groupings.includes(groupBy as RequestStatsGroupBy))
    throw invalidParameter('group_by', `group_by must be one of ${groupings.join(', ')}`);
  const bucket = given('bucket') ? query['bucket'] : undefined;
  if (bucket !== undefined && !buckets.includes(bucket as RequestStatsBucket))
    throw invalidParameter('bucket', `bucket must be one of ${buckets.join(', ')}`);
  return {
    from,
    to: range.to,
    groupBy: groupBy as RequestStatsGroupBy,
    ...(bucket === undefined ? {} : { bucket: bucket as RequestStatsBucket }),
    maxRows: maxStatsRows,
  };
}
