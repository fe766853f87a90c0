import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors/gateway-error.ts';
import { normalizeUserPathOrThrow } from '../auth/user-path-header.ts';
import type {
  RequestLogCursor,
  RequestLogEntry,
  RequestLogQuery,
  RequestLogStore,
  StatusFilter,
} from '../request-log/request-log-store.ts';
import { featureUnavailable, invalidParameter, isoTime, queryText } from './admin-errors.ts';
import { registerRequestStatsRoute } from './request-stats-route.ts';
import type { AnswerOf, requestLogEntrySchema } from './schemas/answers.ts';

const defaultLimit = 50;
const maxLimit = 500;
const dateOnly = /^\d{4}-\d{2}-\d{2}$/;

/** The managed keys, for their names (`ApiKeyService.list`). */
export interface KeyDirectory {
  list(): Promise<readonly { readonly id: string; readonly name: string }[]>;
}

/**
 * `GET /admin/requests`, `GET /admin/requests/{id}` (issue 16 "Names fixed here") and
 * `GET /admin/requests/stats`. Entries show their key's current name (`api_key_name`), looked up
 * once per answer from the managed keys.
 */
export function registerRequestLogRoutes(app: FastifyInstance, store: RequestLogStore | null, keys: KeyDirectory | null = null): void {
  const keyNames = async (entries: readonly RequestLogEntry[]): Promise<ReadonlyMap<string, string>> => {
    if (keys === null || !entries.some((entry) => entry.apiKeyId !== null)) return new Map();
    return new Map((await keys.list()).map((key) => [key.id, key.name]));
  };
  app.get('/admin/requests', async (request) => {
    if (store === null) throw featureUnavailable('the request log', 'REQUEST_LOG_ENABLED');
    const page = await store.list(readRequestLogQuery(request.query as Record<string, unknown>));
    const names = await keyNames(page.entries);
    return {
      requests: page.entries.map((entry) => renderEntry(entry, names)),
      next_cursor: page.next === null ? null : encodeCursor(page.next),
    };
  });
  registerRequestStatsRoute(app, store);
  app.get('/admin/requests/:id', async (request) => {
    if (store === null) throw featureUnavailable('the request log', 'REQUEST_LOG_ENABLED');
    const { id } = request.params as { id: string };
    const entry = await store.find(id);
    if (entry === null) throw notFound(`the request log holds no request ${id}`, { code: 'request_not_found' });
    const names = await keyNames([entry]);
    return { ...renderEntry(entry, names), request_body: entry.requestBody, response_body: entry.responseBody };
  });
}

/** The filters of a listing; a value that cannot be one is a 400 naming its parameter. */
export function readRequestLogQuery(query: Record<string, unknown>): RequestLogQuery {
  const text = (name: string): string | undefined => queryText(query, name);
  const userPath = text('user_path');
  const from = time('from', text('from'), false);
  const to = time('to', text('to'), true);
  if (from !== undefined && to !== undefined && from >= to) throw invalidParameter('from', '`from` must be before `to`');
  const filters: Record<string, unknown> = {
    from,
    to,
    userPath: userPath === undefined ? undefined : subtree(userPath),
    apiKeyId: text('api_key_id'),
    provider: text('provider'),
    model: text('model'),
    status: status(text('status')),
    errorCode: text('code'),
    endpoint: text('endpoint'),
    cacheHit: flag('cache_hit', text('cache_hit')),
    text: text('q'),
    after: cursor(text('cursor')),
  };
  for (const [key, value] of Object.entries(filters)) if (value === undefined) delete filters[key];
  return { ...filters, limit: limit(text('limit')) } as RequestLogQuery;
}

function subtree(value: string): string {
  try {
    return normalizeUserPathOrThrow(value, 'user_path');
  } catch (error) {
    throw invalidParameter('user_path', error instanceof Error ? error.message : 'invalid user_path');
  }
}

function time(name: string, value: string | undefined, isEnd: boolean): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Date.parse(dateOnly.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(parsed)) throw invalidParameter(name, `\`${name}\` must be an ISO date or date-time, got ${JSON.stringify(value)}`);
  return dateOnly.test(value) && isEnd ? parsed + 86_400_000 : parsed;
}

function status(value: string | undefined): StatusFilter | undefined {
  if (value === undefined) return undefined;
  if (/^[1-5]\d\d$/.test(value)) return { exact: Number(value) };
  const classMatch = /^([1-5])xx$/i.exec(value);
  if (classMatch?.[1] !== undefined) return { statusClass: Number(classMatch[1]) };
  throw invalidParameter('status', '`status` must be a status such as 200 or 429, or a class such as 4xx or 5xx');
}

function flag(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw invalidParameter(name, `\`${name}\` must be true or false`);
}

function limit(value: string | undefined): number {
  if (value === undefined) return defaultLimit;
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(parsed >= 1 && parsed <= maxLimit)) throw invalidParameter('limit', `\`limit\` must be an integer from 1 to ${maxLimit}`);
  return parsed;
}

/** Cursors are opaque to clients: base64url of `[time, rowId]`. */
function encodeCursor(cursor: RequestLogCursor): string {
  return Buffer.from(JSON.stringify([cursor.time, cursor.rowId])).toString('base64url');
}

function cursor(value: string | undefined): RequestLogCursor | undefined {
  if (value === undefined) return undefined;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    if (Array.isArray(decoded) && Number.isSafeInteger(decoded[0]) && typeof decoded[1] === 'string')
      return { time: decoded[0] as number, rowId: decoded[1] };
  } catch {
    // Reported below.
  }
  throw invalidParameter('cursor', '`cursor` must be a `next_cursor` of an earlier page');
}

/** An entry as the API shows it (without bodies); `keyNames`: API key id -> name. */
export function renderEntry(
  entry: RequestLogEntry,
  keyNames: ReadonlyMap<string, string> = new Map(),
): AnswerOf<typeof requestLogEntrySchema> {
  return {
    id: entry.id,
    time: isoTime(entry.time),
    user_path: entry.userPath,
    api_key_id: entry.apiKeyId,
    api_key_name: entry.apiKeyId === null ? null : (keyNames.get(entry.apiKeyId) ?? null),
    endpoint: entry.endpoint,
    model_requested: entry.modelRequested,
    virtual_model: entry.virtualModel,
    attempts: entry.attempts.map((attempt) => ({
      provider: attempt.provider,
      model: attempt.model,
      status: attempt.status,
      latency_ms: attempt.latencyMs,
      error_code: attempt.errorCode,
    })),
    provider: entry.provider,
    model: entry.model,
    status: entry.status,
    error_type: entry.errorType,
    error_code: entry.errorCode,
    rate_limit: entry.rateLimit,
    latency_ms: entry.latencyMs,
    ttft_ms: entry.ttftMs,
    prompt_tokens: entry.promptTokens,
    completion_tokens: entry.completionTokens,
    total_tokens: entry.totalTokens,
    cost_usd: entry.costUsd,
    cache_hit: entry.cacheHit,
    stream: entry.stream,
    user_agent: entry.userAgent,
    guardrails: entry.guardrails === null ? null : [...entry.guardrails],
  };
}
