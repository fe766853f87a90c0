import { invalidRequest } from '../errors/gateway-error.ts';
import { periodSecondsOf } from '../ratelimit/periods.ts';
import { RuleValidationError, rateLimitScopes, type RateLimitScope, type RuleDraft } from '../ratelimit/rules.ts';
import { invalidParameter } from './admin-errors.ts';

/** Reads `scope` + `subject`, or the `user_path` shorthand (SEED-SPEC "Rate-limit rule"). */
export function readScopeAndSubject(body: Record<string, unknown>): { scope: RateLimitScope; subject: string } {
  const scope = body['scope'] ?? 'user_path';
  if (typeof scope !== 'string' || !rateLimitScopes.includes(scope as RateLimitScope)) {
    throw invalidParameter('scope', 'scope must be one of user_path, provider, model');
  }
  const subject = optionalString(body, 'subject');
  const userPath = optionalString(body, 'user_path');
  if (scope !== 'user_path') {
    if (userPath !== undefined)
      throw invalidParameter('user_path', 'user_path names user-path rules only; give subject for provider and model rules');
    if (subject === undefined) throw invalidParameter('subject', `subject is required for ${scope} rules`);
    return { scope: scope as RateLimitScope, subject };
  }
  const path = subject ?? userPath;
  if (path === undefined) throw invalidParameter('user_path', 'user_path (or scope and subject) is required');
  return { scope: 'user_path', subject: path };
}

/** Reads a period from `{period}` or `{period_seconds}` (a numeric `period` string is seconds too). */
export function readPeriod(holder: Record<string, unknown>, field: string): number {
  const period = holder['period'];
  const seconds = holder['period_seconds'];
  if (period !== undefined && seconds !== undefined) throw invalidParameter(field, 'set either period or period_seconds, not both');
  if (seconds !== undefined) {
    if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0) {
      throw invalidParameter('period_seconds', 'period_seconds must be 0 (concurrent) or a positive integer');
    }
    return seconds;
  }
  if (typeof period === 'string') {
    const named = /^\d+$/.test(period.trim()) ? Number(period.trim()) : periodSecondsOf(period);
    if (named !== null) return named;
  }
  throw invalidParameter('period', 'period must be one of minute, hour, day, concurrent, or set period_seconds');
}

/** The rule of a PUT body; `limit_key` holds the period. */
export function readRuleDraft(body: Record<string, unknown>): RuleDraft {
  const { scope, subject } = readScopeAndSubject(body);
  return {
    scope,
    subject,
    periodSeconds: readPeriod(readLimitKey(body), 'limit_key'),
    maxRequests: readCap(body, 'max_requests'),
    maxTokens: readCap(body, 'max_tokens'),
  };
}

export function readLimitKey(body: Record<string, unknown>): Record<string, unknown> {
  const limitKey = body['limit_key'];
  if (typeof limitKey !== 'object' || limitKey === null || Array.isArray(limitKey)) {
    throw invalidRequest('limit_key is required: {"period": "minute"} or {"period_seconds": 300}', {
      code: 'missing_field',
      param: 'limit_key',
    });
  }
  return limitKey as Record<string, unknown>;
}

/** RuleValidationError -> 400 naming the field. */
export function asBadRequest(error: unknown): unknown {
  return error instanceof RuleValidationError ? invalidParameter(error.field, error.message) : error;
}

function readCap(body: Record<string, unknown>, field: string): number | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0)
    throw invalidParameter(field, `${field} must be an integer greater than 0`);
  return value;
}

function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw invalidParameter(field, `${field} must be a string`);
  return value;
}
