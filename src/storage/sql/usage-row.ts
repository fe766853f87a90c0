import type { UsageRecord } from '../../usage/usage-store.ts';
import type { SqlValue } from './sql-executor.ts';
import { toBoolean, toNullableNumber, toNumber } from './sql-executor.ts';

/** Columns of `usage_records`, in the order of {@link usageRowValues}. */
export const usageColumns = [
  'id',
  'request_id',
  'ts',
  'user_path',
  'user_path_lower',
  'api_key_id',
  'endpoint',
  'provider',
  'model',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'usage_json',
  'cost_usd',
  'cache_hit',
  'stream',
  'status',
  'latency_ms',
] as const;

/** A `usage_records` row as either driver returns it. */
export interface UsageRow {
  readonly id: string;
  readonly request_id: string;
  readonly ts: number | string;
  readonly user_path: string;
  readonly api_key_id: string | null;
  readonly endpoint: string;
  readonly provider: string;
  readonly model: string;
  readonly prompt_tokens: number | string;
  readonly completion_tokens: number | string;
  readonly total_tokens: number | string;
  readonly usage_json: string | null;
  readonly cost_usd: number | string | null;
  readonly cache_hit: boolean | number;
  readonly stream: boolean | number;
  readonly status: number | string;
  readonly latency_ms: number | string;
}

export function usageRowValues(record: UsageRecord): SqlValue[] {
  return [
    record.id,
    record.requestId,
    record.timestamp,
    record.userPath,
    record.userPath.toLowerCase(),
    record.apiKeyId,
    record.endpoint,
    record.provider,
    record.model,
    record.promptTokens,
    record.completionTokens,
    record.totalTokens,
    record.usage === null ? null : JSON.stringify(record.usage),
    record.costUsd,
    record.cacheHit,
    record.stream,
    record.status,
    record.latencyMs,
  ];
}

export function usageRecordFromRow(row: UsageRow): UsageRecord {
  return {
    id: row.id,
    requestId: row.request_id,
    timestamp: toNumber(row.ts),
    userPath: row.user_path,
    apiKeyId: row.api_key_id,
    endpoint: row.endpoint,
    provider: row.provider,
    model: row.model,
    promptTokens: toNumber(row.prompt_tokens),
    completionTokens: toNumber(row.completion_tokens),
    totalTokens: toNumber(row.total_tokens),
    usage: row.usage_json === null ? null : (JSON.parse(row.usage_json) as Record<string, unknown>),
    costUsd: toNullableNumber(row.cost_usd),
    cacheHit: toBoolean(row.cache_hit),
    stream: toBoolean(row.stream),
    status: toNumber(row.status),
    latencyMs: toNumber(row.latency_ms),
  };
}
