import type { z } from 'zod';
import { periodSecondsOf } from '../ratelimit/periods.ts';
import { RuleValidationError, type RateLimitScope, type RuleDraft } from '../ratelimit/rules.ts';
import { invalidParameter } from './admin-errors.ts';
import type { rateLimitDeleteSchema, rateLimitPutSchema } from './schemas/bodies.ts';

// The rules that tie fields of a rate-limit body together, on bodies the schemas of
// src/admin/schemas/bodies.ts have already typed (and refused with the field named).

type RuleKey = Pick<z.output<typeof rateLimitDeleteSchema>, 'scope' | 'subject' | 'user_path'>;
type PeriodHolder = { period?: string | undefined; period_seconds?: number | undefined };

/** `scope` + `subject`, or the `user_path` shorthand (SEED-SPEC "Rate-limit rule"); `''` and null are absent. */
export function readScopeAndSubject(body: RuleKey): { scope: RateLimitScope; subject: string } {
  const scope = body.scope ?? 'user_path';
  const subject = presentText(body.subject);
  const userPath = presentText(body.user_path);
  if (scope !== 'user_path') {
    if (userPath !== undefined)
      throw invalidParameter('user_path', 'user_path names user-path rules only; give subject for provider and model rules');
    if (subject === undefined) throw invalidParameter('subject', `subject is required for ${scope} rules`);
    return { scope, subject };
  }
  const path = subject ?? userPath;
  if (path === undefined) throw invalidParameter('user_path', 'user_path (or scope and subject) is required');
  return { scope: 'user_path', subject: path };
}

/** A period from `{period}` or `{period_seconds}` (a numeric `period` string is seconds too). */
export function readPeriod(holder: PeriodHolder, field: string): number {
  const { period, period_seconds: seconds } = holder;
  if (period !== undefined && seconds !== undefined) throw invalidParameter(field, 'set either period or period_seconds, not both');
  if (seconds !== undefined) return seconds;
  if (period !== undefined) {
    const named = /^\d+$/.test(period.trim()) ? Number(period.trim()) : periodSecondsOf(period);
    if (named !== null) return named;
  }
  throw invalidParameter('period', 'period must be one of minute, hour, day, concurrent, or set period_seconds');
}

/** The rule of a PUT body; `limit_key` holds the period. */
export function readRuleDraft(body: z.output<typeof rateLimitPutSchema>): RuleDraft {
  return {
    ...readScopeAndSubject(body),
    periodSeconds: readPeriod(body.limit_key, 'limit_key'),
    maxRequests: body.max_requests ?? null,
    maxTokens: body.max_tokens ?? null,
  };
}

/** RuleValidationError -> 400 naming the field. */
export function asBadRequest(error: unknown): unknown {
  return error instanceof RuleValidationError ? invalidParameter(error.field, error.message) : error;
}

const presentText = (value: string | null | undefined): string | undefined => (value === null || value === '' ? undefined : value);
