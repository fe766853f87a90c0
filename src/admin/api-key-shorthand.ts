import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forwardedCredentials } from '../audit/admin-audit.ts';
import type { ErrorCode } from '../errors/codes.ts';
import { GatewayError, type ErrorType } from '../errors/gateway-error.ts';
import { invalidParameter } from './admin-errors.ts';

interface Envelope {
  error?: { message?: string; type?: string; code?: string | null; param?: string | null };
}

/**
 * The per-key shorthand of `POST /admin/api-keys`: `rate_limit` `{period, max_requests?,
 * max_tokens?}` and `budget` `{period | period_seconds, amount}` become rules on the key's user
 * path, made through `PUT /admin/rate-limits` and `PUT /admin/budgets` with the caller's own
 * credentials: validated, stored and audited exactly as those calls are. A refusal names the
 * field under its shorthand (`rate_limit.max_requests`).
 */
export async function applyKeyShorthand(
  app: FastifyInstance,
  request: FastifyRequest,
  body: Record<string, unknown>,
  userPath: string | null,
): Promise<void> {
  const rateLimit = shorthand(body, 'rate_limit');
  const budget = shorthand(body, 'budget');
  if ((rateLimit !== undefined || budget !== undefined) && userPath === null) {
    throw invalidParameter('user_path', 'rate_limit and budget make rules on the key user path: give user_path');
  }
  if (rateLimit !== undefined) {
    const { period, period_seconds: periodSeconds, ...limits } = rateLimit;
    const limitKey = periodSeconds === undefined ? { period } : { period_seconds: periodSeconds };
    await put(app, request, '/admin/rate-limits', 'rate_limit', { ...limits, user_path: userPath, limit_key: limitKey });
  }
  if (budget !== undefined) await put(app, request, '/admin/budgets', 'budget', { ...budget, user_path: userPath });
}

function shorthand(body: Record<string, unknown>, field: 'rate_limit' | 'budget'): Record<string, unknown> | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidParameter(field, `${field} must be an object`);
  const record = value as Record<string, unknown>;
  if ('user_path' in record || 'scope' in record || 'subject' in record) {
    throw invalidParameter(field, `${field} applies to the key's user_path: leave user_path, scope and subject out`);
  }
  return record;
}

async function put(
  app: FastifyInstance,
  request: FastifyRequest,
  url: string,
  field: string,
  payload: Record<string, unknown>,
): Promise<void> {
  const headers = { ...forwardedCredentials(request), 'content-type': 'application/json' };
  const reply = await app.inject({ method: 'PUT', url, headers, payload: JSON.stringify(payload) });
  if (reply.statusCode === 200) return;
  const error = (reply.json<Envelope>().error ?? {}) as NonNullable<Envelope['error']>;
  const param = error.param === null || error.param === undefined || error.param === 'user_path' ? field : `${field}.${error.param}`;
  throw new GatewayError((error.type ?? 'invalid_request_error') as ErrorType, `${field}: ${error.message ?? 'refused'}`, {
    status: reply.statusCode,
    code: (error.code ?? null) as ErrorCode | null,
    param,
  });
}
