import { InvalidUserPathError, normalizeUserPath } from '../core/user-path.ts';
import type { RateLimitScope } from './rule-store.ts';

export type { RateLimitScope } from './rule-store.ts';

export const rateLimitScopes: readonly RateLimitScope[] = ['user_path', 'provider', 'model'];

/** A rule in force. Identity: (scope, lower-cased subject, periodSeconds). */
export interface RateLimitRule {
  /** `scope|subject-lower-cased|period`: the rule's identity. */
  readonly id: string;
  /**
   * Keys the rule's counters: the identity plus a generation that changes when the rule is
   * deleted and created again (cap edits keep it), so a slot taken under the old rule can
   * never free a slot of the new one.
   */
  readonly counterKey: string;
  readonly scope: RateLimitScope;
  /** The path (case kept), or the provider instance / model id (lower-cased). */
  readonly subject: string;
  readonly periodSeconds: number;
  readonly maxRequests: number | null;
  readonly maxTokens: number | null;
  readonly origin: 'manual' | 'config';
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface RuleDraft {
  scope: RateLimitScope;
  subject: string;
  periodSeconds: number;
  maxRequests: number | null;
  maxTokens: number | null;
}

/** A rule that breaks the rules of reference/ratelimits.md section 1; `field` names the input. */
export class RuleValidationError extends Error {
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.name = 'RuleValidationError';
    this.field = field;
  }
}

export function ruleId(scope: RateLimitScope, subject: string, periodSeconds: number): string {
  return `${scope}|${subject.toLowerCase()}|${periodSeconds}`;
}

/** Validates and normalises a rule: paths normalised, provider and model subjects lower-cased. */
export function validateRule(draft: RuleDraft): RuleDraft {
  const subject = normalizeSubject(draft.scope, draft.subject);
  const { periodSeconds, maxRequests, maxTokens } = draft;
  if (!Number.isInteger(periodSeconds) || periodSeconds < 0) {
    throw new RuleValidationError('period_seconds', 'period_seconds must be 0 (concurrent) or a positive integer');
  }
  for (const [field, value] of [
    ['max_requests', maxRequests],
    ['max_tokens', maxTokens],
  ] as const) {
    if (value !== null && (!Number.isSafeInteger(value) || value <= 0))
      throw new RuleValidationError(field, `${field} must be an integer greater than 0`);
  }
  if (periodSeconds === 0) {
    if (maxTokens !== null) throw new RuleValidationError('max_tokens', 'max_tokens is not valid for the concurrent period');
    if (maxRequests === null) throw new RuleValidationError('max_requests', 'max_requests is required for the concurrent period');
  } else if (maxRequests === null && maxTokens === null) {
    throw new RuleValidationError('max_requests', 'at least one of max_requests or max_tokens is required');
  }
  return { ...draft, subject };
}

function normalizeSubject(scope: RateLimitScope, raw: string): string {
  if (!rateLimitScopes.includes(scope)) throw new RuleValidationError('scope', 'scope must be one of user_path, provider, model');
  const subject = raw.trim();
  if (scope === 'user_path') {
    try {
      return normalizeUserPath(subject);
    } catch (error) {
      if (error instanceof InvalidUserPathError) throw new RuleValidationError('subject', `invalid user path: ${error.message}`);
      throw error;
    }
  }
  if (subject === '') throw new RuleValidationError('subject', `${scope} rule subject is required`);
  if (scope === 'provider' && /[/\s]/.test(subject)) {
    throw new RuleValidationError('subject', 'provider rule subject must be a provider instance name without slashes or spaces');
  }
  if (scope === 'model' && (subject.startsWith('/') || subject.endsWith('/'))) {
    throw new RuleValidationError('subject', 'model rule subject must not start or end with a slash');
  }
  return subject.toLowerCase();
}
