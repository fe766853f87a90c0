import type { FastifyReply, FastifyRequest } from 'fastify';
import { capNullableText, capText, storedTextLimits } from '../core/stored-text.ts';
import { timeOrderedUuid } from '../core/time-ordered-id.ts';
import { RateLimitRejection } from '../ratelimit/rejection.ts';
import { keptBody, redactUrl } from './redaction.ts';
import type { RequestLogBodies } from './request-log-settings.ts';
import type { RequestLogAttempt, RequestLogEntry } from './request-log-store.ts';
import type { RequestTrail, TrailAttempt } from './request-trail.ts';

export interface BodyPolicy {
  readonly bodies: RequestLogBodies;
  readonly maxBytes: number;
}

/** The entry of a settled request, from what the request already carries (no extra work on its path). */
export function buildEntry(request: FastifyRequest, reply: FastifyReply, trail: RequestTrail, policy: BodyPolicy): RequestLogEntry {
  const fields = request.logFields;
  const body =
    typeof request.body === 'object' && request.body !== null && !Buffer.isBuffer(request.body)
      ? (request.body as Record<string, unknown>)
      : null;
  const status = trail.clientGone ? 499 : reply.raw.statusCode;
  const error = errorOf(trail, status, fields);
  const attempts = trail.attempts === null ? [] : trail.attempts.map(logAttempt);
  const last = attempts[attempts.length - 1];
  const keepBodies = policy.bodies === 'all' || (policy.bodies === 'errors' && status >= 400);
  const elapsed = performance.now() - request.startedAt;
  const arrivedAt = Math.round(Date.now() - elapsed);
  return {
    rowId: rowIdOf(request, arrivedAt),
    id: request.id,
    time: arrivedAt,
    userPath: request.userPath,
    apiKeyId: request.principal?.keyId ?? null,
    endpoint: capText(endpointOf(request, trail.endpoint), storedTextLimits.endpoint),
    // A passthrough body stays raw: its route read the model for the log fields. Capped: a refused request is logged too.
    modelRequested: capNullableText(
      typeof body?.['model'] === 'string' ? body['model'] : textField(fields, 'model'),
      storedTextLimits.model,
    ),
    virtualModel: trail.virtualModel,
    attempts,
    provider: textField(fields, 'provider') ?? last?.provider ?? null,
    model: capNullableText(textField(fields, 'model') ?? last?.model ?? null, storedTextLimits.model),
    status,
    errorType: error.type,
    errorCode: error.code,
    rateLimit: trail.error instanceof RateLimitRejection ? trail.error.rule : null,
    latencyMs: round(elapsed),
    ttftMs: trail.firstByteAt === null ? null : round(trail.firstByteAt - request.startedAt),
    promptTokens: trail.promptTokens,
    completionTokens: trail.completionTokens,
    totalTokens: trail.totalTokens,
    costUsd: trail.costUsd,
    cacheHit: trail.cacheHit || fields?.['cache'] === 'hit',
    stream: fields?.['stream'] === true || body?.['stream'] === true,
    userAgent: capNullableText(request.headers['user-agent'] ?? null, storedTextLimits.userAgent),
    requestBody: keepBodies ? keptBody(request.body, policy.maxBytes) : null,
    responseBody: keepBodies ? keptBody(trail.responseBody, policy.maxBytes) : null,
    guardrails: trail.guardrails,
  };
}

/**
 * The row's key. A request id the gateway made (no inbound `X-Request-ID`) is a time-ordered
 * UUID made at arrival and never handed out again, so it serves as the key and the entry
 * costs no second id; an inbound id may repeat, so its entry gets an id of its own.
 */
function rowIdOf(request: FastifyRequest, arrivedAt: number): string {
  return request.headers['x-request-id'] === undefined ? request.id : timeOrderedUuid(arrivedAt);
}

function errorOf(
  trail: RequestTrail,
  status: number,
  fields: Record<string, unknown> | null,
): { type: string | null; code: string | null } {
  if (trail.clientGone) return { type: 'invalid_request_error', code: 'client_closed_request' };
  if (trail.error !== null && status >= 400) return { type: trail.error.type, code: trail.error.code };
  // A stream that broke after its first byte went out with 200.
  if (fields?.['stream_end'] === 'upstream_error') return { type: 'provider_error', code: 'upstream_error' };
  return { type: null, code: null };
}

/** The route for fixed endpoints; the path itself (credential parameters redacted, no query) for passthrough. */
function endpointOf(request: FastifyRequest, route: string): string {
  return route.startsWith('/p/') ? (redactUrl(request.url).split('?')[0] ?? route) : route;
}

function logAttempt(attempt: TrailAttempt): RequestLogAttempt {
  const status = attempt.status ?? (attempt.outcome === 'ok' ? 200 : attempt.outcome === 'skipped_circuit_open' ? 503 : null);
  const errorCode = attempt.errorCode ?? (attempt.outcome === 'skipped_circuit_open' ? 'circuit_open' : null);
  return {
    provider: attempt.provider,
    model: capText(attempt.model, storedTextLimits.model),
    status,
    latencyMs: attempt.latencyMs ?? null,
    errorCode,
  };
}

function textField(fields: Record<string, unknown> | null, name: string): string | null {
  const value = fields?.[name];
  return typeof value === 'string' ? value : null;
}

const round = (milliseconds: number): number => Math.round(milliseconds * 10) / 10;
