import type {
  ApiKeyActivity,
  RequestStats,
  RequestStatsBucket,
  RequestStatsGroup,
  RequestStatsQuery,
} from '../../request-log/request-log-store.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlParameters, toNullableNumber, toNumber } from './sql-executor.ts';

const bucketMilliseconds: Readonly<Record<RequestStatsBucket, number>> = { hour: 3_600_000, day: 86_400_000 };

interface StatsRow {
  readonly group_key: string | null;
  readonly bucket: number | string;
  readonly requests: number | string;
  readonly errors: number | string;
  readonly server_errors: number | string;
  readonly low: number | string;
  readonly high: number | string;
  readonly oldest: number | string;
}

/** A latency bin: 5 ms wide under 100 ms, 50 ms under 1 s, 500 ms under 10 s, 5 s beyond. */
function latencyBin(dialect: SqlExecutor['dialect']): string {
  const floor = (expression: string): string => (dialect === 'sqlite' ? `CAST(${expression} AS INTEGER)` : `FLOOR(${expression})`);
  const steps: [number, number][] = [
    [100, 5],
    [1_000, 50],
    [10_000, 500],
  ];
  const cases = steps.map(([below, width]) => `WHEN latency_ms < ${below} THEN ${floor(`latency_ms / ${width}`)} * ${width}`);
  return `CASE ${cases.join(' ')} ELSE ${floor('latency_ms / 5000')} * 5000 END`;
}

/**
 * Count, errors and p50/p95 latency per provider or model (and bucket), in one statement on
 * both dialects: the newest `maxRows` entries of the range are read in time order over the
 * (ts, row_id, …) covering index (the bound keeps a wide range over millions of rows cheap)
 * and counted per group and latency bin, with each bin's lowest and highest latency; the
 * percentiles are read off that histogram (nearest rank, interpolated inside its bin: exact
 * when a bin holds one value, within the bin's width otherwise). No per-row sort.
 */
export async function requestStats(executor: SqlExecutor, query: RequestStatsQuery): Promise<RequestStats> {
  const parameters = new SqlParameters(executor);
  const column = query.groupBy === 'provider' ? 'provider' : 'model';
  const size = query.bucket === undefined ? null : parameters.add(bucketMilliseconds[query.bucket]);
  const bucket = size === null ? '0' : `ts - (ts % ${size})`;
  const from = parameters.add(query.from);
  const to = parameters.add(query.to);
  const limit = parameters.add(query.maxRows);
  const text = `SELECT group_key, bucket, COUNT(*) AS requests,
      SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END) AS errors,
      SUM(CASE WHEN status >= 500 THEN 1 ELSE 0 END) AS server_errors,
      MIN(latency_ms) AS low, MAX(latency_ms) AS high, MIN(ts) AS oldest
    FROM (
      SELECT ${column} AS group_key, ${bucket} AS bucket, ${latencyBin(executor.dialect)} AS bin, ts, latency_ms, status
      FROM request_log WHERE ts >= ${from} AND ts < ${to} ORDER BY ts DESC LIMIT ${limit}
    ) AS recent
    GROUP BY group_key, bucket, bin`;
  const rows = await executor.query<StatsRow>(text, parameters.values);
  const groups = new Map<string, StatsRow[]>();
  for (const row of rows) {
    const id = `${toNumber(row.bucket)}\u0000${row.group_key ?? '\u0001'}`;
    const bins = groups.get(id);
    if (bins === undefined) groups.set(id, [row]);
    else bins.push(row);
  }
  const result = [...groups.values()].map((bins) => statsGroup(bins, query.bucket !== undefined)).sort(byBucketThenKey);
  const oldest = rows.length === 0 ? null : Math.min(...rows.map((row) => toNumber(row.oldest)));
  return { groups: result, rows: result.reduce((sum, group) => sum + group.requests, 0), oldest };
}

function statsGroup(bins: StatsRow[], bucketed: boolean): RequestStatsGroup {
  const histogram = bins
    .map((bin) => ({ count: toNumber(bin.requests), low: toNumber(bin.low), high: toNumber(bin.high) }))
    .sort((left, right) => left.low - right.low);
  const first = bins[0] as StatsRow;
  const requests = histogram.reduce((sum, bin) => sum + bin.count, 0);
  return {
    key: first.group_key,
    ...(bucketed ? { bucket: toNumber(first.bucket) } : {}),
    requests,
    errors: bins.reduce((sum, bin) => sum + toNumber(bin.errors), 0),
    serverErrors: bins.reduce((sum, bin) => sum + toNumber(bin.server_errors), 0),
    p50LatencyMs: percentile(histogram, requests, 0.5),
    p95LatencyMs: percentile(histogram, requests, 0.95),
  };
}

/** The nearest-rank percentile of a histogram, interpolated between its bin's lowest and highest value. */
function percentile(histogram: readonly { count: number; low: number; high: number }[], total: number, share: number): number {
  const rank = Math.max(1, Math.ceil(share * total));
  let seen = 0;
  for (const bin of histogram) {
    if (seen + bin.count >= rank) {
      const position = bin.count === 1 ? 0 : (rank - seen - 1) / (bin.count - 1);
      return Math.round((bin.low + (bin.high - bin.low) * position) * 10) / 10;
    }
    seen += bin.count;
  }
  return histogram[histogram.length - 1]?.high ?? 0;
}

function byBucketThenKey(left: RequestStatsGroup, right: RequestStatsGroup): number {
  const buckets = (left.bucket ?? 0) - (right.bucket ?? 0);
  if (buckets !== 0) return buckets;
  if (left.key === right.key) return 0;
  if (left.key === null) return 1;
  if (right.key === null) return -1;
  return left.key < right.key ? -1 : 1;
}

interface ActivityRow {
  readonly api_key_id: string;
  readonly requests: number | string;
  readonly last_used: number | string;
  readonly cost: number | string | null;
  readonly unpriced: number | string;
}

/** Requests, last use and cost of every API key from `from` on: one grouped query. */
export async function apiKeyActivity(executor: SqlExecutor, from: number): Promise<ApiKeyActivity[]> {
  const parameters = new SqlParameters(executor);
  const text = `SELECT api_key_id, COUNT(*) AS requests, MAX(ts) AS last_used, SUM(cost_usd) AS cost,
      SUM(CASE WHEN cost_usd IS NULL AND total_tokens > 0 THEN 1 ELSE 0 END) AS unpriced
    FROM request_log WHERE api_key_id IS NOT NULL AND ts >= ${parameters.add(from)}
    GROUP BY api_key_id ORDER BY api_key_id`;
  const rows = await executor.query<ActivityRow>(text, parameters.values);
  return rows.map((row) => ({
    apiKeyId: row.api_key_id,
    requests: toNumber(row.requests),
    lastUsedAt: toNumber(row.last_used),
    costUsd: toNumber(row.unpriced) > 0 ? null : (toNullableNumber(row.cost) ?? 0),
  }));
}
