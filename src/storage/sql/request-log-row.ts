import type { RateLimitRuleRef, RequestLogAttempt, RequestLogEntry, RequestLogGuardrail } from '../../request-log/request-log-store.ts';
import type { SqlValue } from './sql-executor.ts';
import { toBoolean, toNullableNumber, toNumber } from './sql-executor.ts';

/** Columns of `request_log`, in the order of {@link requestLogRowValues}. */
export const requestLogColumns = [
  'row_id',
  'request_id',
  'ts',
  'user_path',
  'user_path_lower',
  'api_key_id',
  'endpoint',
  'model_requested',
  'virtual_model',
  'attempts_json',
  'provider',
  'model',
  'status',
  'status_class',
  'error_type',
  'error_code',
  'rate_limit_json',
  'latency_ms',
  'ttft_ms',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cost_usd',
  'cache_hit',
  'stream',
  'user_agent',
  'request_body',
  'response_body',
  'guardrails_json',
] as const;

/** The columns of a listing: everything but the bodies. */
export const requestLogListColumns = requestLogColumns.filter((column) => column !== 'request_body' && column !== 'response_body');

/** A `request_log` row as either driver returns it. */
export interface RequestLogRow {
  readonly row_id: string;
  readonly request_id: string;
  readonly ts: number | string;
  readonly user_path: string;
  readonly api_key_id: string | null;
  readonly endpoint: string;
  readonly model_requested: string | null;
  readonly virtual_model: string | null;
  readonly attempts_json: string;
  readonly provider: string | null;
  readonly model: string | null;
  readonly status: number | string;
  readonly error_type: string | null;
  readonly error_code: string | null;
  readonly rate_limit_json: string | null;
  readonly latency_ms: number | string;
  readonly ttft_ms: number | string | null;
  readonly prompt_tokens: number | string;
  readonly completion_tokens: number | string;
  readonly total_tokens: number | string;
  readonly cost_usd: number | string | null;
  readonly cache_hit: boolean | number;
  readonly stream: boolean | number;
  readonly user_agent: string | null;
  readonly request_body?: string | null;
  readonly response_body?: string | null;
  readonly guardrails_json: string | null;
}

export function requestLogRowValues(entry: RequestLogEntry): SqlValue[] {
  return [
    entry.rowId,
    entry.id,
    entry.time,
    entry.userPath,
    entry.userPath.toLowerCase(),
    entry.apiKeyId,
    entry.endpoint,
    entry.modelRequested,
    entry.virtualModel,
    JSON.stringify(entry.attempts),
    entry.provider,
    entry.model,
    entry.status,
    Math.floor(entry.status / 100),
    entry.errorType,
    entry.errorCode,
    entry.rateLimit === null ? null : JSON.stringify(entry.rateLimit),
    entry.latencyMs,
    entry.ttftMs,
    entry.promptTokens,
    entry.completionTokens,
    entry.totalTokens,
    entry.costUsd,
    entry.cacheHit,
    entry.stream,
    entry.userAgent,
    entry.requestBody,
    entry.responseBody,
    entry.guardrails === null ? null : JSON.stringify(entry.guardrails),
  ];
}

export function requestLogEntryFromRow(row: RequestLogRow): RequestLogEntry {
  return {
    rowId: row.row_id,
    id: row.request_id,
    time: toNumber(row.ts),
    userPath: row.user_path,
    apiKeyId: row.api_key_id,
    endpoint: row.endpoint,
    modelRequested: row.model_requested,
    virtualModel: row.virtual_model,
    attempts: JSON.parse(row.attempts_json) as RequestLogAttempt[],
    provider: row.provider,
    model: row.model,
    status: toNumber(row.status),
    errorType: row.error_type,
    errorCode: row.error_code,
    rateLimit: row.rate_limit_json === null ? null : (JSON.parse(row.rate_limit_json) as RateLimitRuleRef),
    latencyMs: toNumber(row.latency_ms),
    ttftMs: toNullableNumber(row.ttft_ms),
    promptTokens: toNumber(row.prompt_tokens),
    completionTokens: toNumber(row.completion_tokens),
    totalTokens: toNumber(row.total_tokens),
    costUsd: toNullableNumber(row.cost_usd),
    cacheHit: toBoolean(row.cache_hit),
    stream: toBoolean(row.stream),
    userAgent: row.user_agent,
    requestBody: row.request_body ?? null,
    responseBody: row.response_body ?? null,
    guardrails: row.guardrails_json === null ? null : (JSON.parse(row.guardrails_json) as RequestLogGuardrail[]),
  };
}
