import type { Logger } from 'pino';
import { invalidRequest, notFound, type GatewayError } from '../errors/gateway-error.ts';
import type { RateLimitCounterStore, RuleCounts } from './counter-store.ts';
import { periodLabel } from './periods.ts';
import { rateLimitExceeded, successHeaders } from './rejection.ts';
import type { RateLimitRuleStore } from './rule-store.ts';
import { RuleIndex, type RouteSubject } from './rule-index.ts';
import { ruleId, validateRule, type RateLimitRule, type RateLimitScope, type RuleDraft } from './rules.ts';

export interface RateLimiterOptions {
  counters: RateLimitCounterStore;
  ruleStore: RateLimitRuleStore;
  configRules: readonly RuleDraft[];
  /** False when usage tracking is off: token caps are then not enforced. */
  enforceTokens: boolean;
  logger: Logger;
  now?: () => number;
}

/** What an admitted request holds: success headers, and its slots until released. */
export interface Admission {
  readonly headers: Readonly<Record<string, string>>;
  /** Gives the concurrency slots back; safe to call more than once. */
  release(): void;
  /** Undoes the admission entirely (the request was refused afterwards, e.g. by a budget). */
  refund(): void;
  /**
   * Splits into the user-path part and the provider/model part, to be released apart (a
   * failover gives back the failed target's slots but keeps the request's own). This
   * admission itself then does nothing.
   */
  split(): { path: Admission; route: Admission };
}

export interface AdmissionRequest {
  /** Take concurrency slots (false for batch submissions). */
  holdSlot?: boolean;
  /** Match provider and model rules (false for route-less requests). */
  routeRules?: boolean;
  /** Match user-path rules (false for a failover attempt: the request was counted there already). */
  pathRules?: boolean;
}

const unlimited: Admission = Object.freeze({
  headers: Object.freeze({}),
  release: () => undefined,
  refund: () => undefined,
  split: () => ({ path: unlimited, route: unlimited }),
});

export const noAdmission = unlimited;

/**
 * Rate limits (SEED-SPEC "Limits"): rules from configuration and the admin API, matched per
 * request, counted in a counter store with check-all-then-commit admission.
 */
export class RateLimiter {
  private readonly options: RateLimiterOptions;
  private readonly now: () => number;
  private readonly rules = new Map<string, RateLimitRule>();
  private index = new RuleIndex([]);
  private generation = 0;

  constructor(options: RateLimiterOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    const at = this.now();
    for (const draft of this.options.configRules) this.put(validateRule(draft), 'config', at, at);
    for (const row of await this.options.ruleStore.list()) {
      const existing = this.rules.get(ruleId(row.scope, row.subject, row.periodSeconds));
      if (existing?.origin === 'config') {
        this.options.logger.warn(
          { scope: row.scope, subject: row.subject },
          'a stored rate-limit rule is shadowed by a configuration rule',
        );
        continue;
      }
      this.put(row, 'manual', row.createdAt, row.updatedAt);
    }
    this.rebuild();
  }

  get ruleCount(): number {
    return this.rules.size;
  }

  hasTokenRules(): boolean {
    return [...this.rules.values()].some((rule) => rule.maxTokens !== null);
  }

  /** Counts the request against every matching rule, or throws the 429 of the rule that blocks longest. */
  async admit(subject: RouteSubject, request: AdmissionRequest = {}): Promise<Admission> {
    const rules = this.index.match(subject, request.routeRules ?? true, request.pathRules ?? true);
    if (rules.length === 0) return unlimited;
    const holdSlot = request.holdSlot ?? true;
    const at = this.now();
    const result = await this.options.counters.admit(rules, { holdSlot, enforceTokens: this.options.enforceTokens }, at);
    if (!result.admitted) throw rateLimitExceeded(result.breach);
    const headers = successHeaders(rules, result.counts, at);
    const whole = this.holding(rules, holdSlot, headers);
    let split = false;
    return {
      headers,
      release: () => (split ? undefined : whole.release()),
      refund: () => (split ? undefined : whole.refund()),
      split: () => {
        split = true;
        return {
          path: this.holding(
            rules.filter((rule) => rule.scope === 'user_path'),
            holdSlot,
            headers,
          ),
          route: this.holding(
            rules.filter((rule) => rule.scope !== 'user_path'),
            holdSlot,
            {},
          ),
        };
      },
    };
  }

  /** An admission over `rules`: releases their slots, or refunds them, exactly once. */
  private holding(rules: readonly RateLimitRule[], holdSlot: boolean, headers: Readonly<Record<string, string>>): Admission {
    const counters = this.options.counters;
    const slots = holdSlot ? rules.filter((rule) => rule.periodSeconds === 0) : [];
    const counted = rules.filter((rule) => rule.periodSeconds > 0 || holdSlot);
    let settled = false;
    const settle = (action: () => Promise<void>): void => {
      if (settled) return;
      settled = true;
      action().catch((error: unknown) => this.options.logger.error({ err: error }, 'rate-limit counter update failed'));
    };
    const admission: Admission = {
      headers,
      release: () => settle(() => (slots.length > 0 ? counters.release(slots) : Promise.resolve())),
      refund: () => settle(() => counters.refund(counted, this.now())),
      split: () => ({ path: admission, route: unlimited }),
    };
    return admission;
  }

  /** Charges a completed response's tokens to the rules of its path, provider and executed model. */
  recordTokens(subject: RouteSubject, tokens: number): void {
    if (tokens <= 0 || this.index.size === 0) return;
    const rules = this.index.match(subject).filter((rule) => rule.periodSeconds > 0);
    if (rules.length === 0) return;
    this.options.counters
      .addTokens(rules, tokens, this.now())
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'token accounting failed'));
  }

  /** Whether a target's provider and model rules would admit a request now; counts nothing. */
  async hasCapacity(provider: string, model: string): Promise<boolean> {
    const rules = this.index.matchRoute({ provider, model });
    return rules.length === 0 || this.options.counters.hasCapacity(rules, this.options.enforceTokens, this.now());
  }

  /** Every rule with its live counters, sorted by scope, subject and period. */
  async list(filter?: (rule: RateLimitRule) => boolean): Promise<Array<{ rule: RateLimitRule; counts: RuleCounts }>> {
    const rules = [...this.rules.values()].filter((rule) => filter?.(rule) ?? true).sort(compareRules);
    const counts = await this.options.counters.counts(rules, this.now());
    return rules.map((rule, index) => ({ rule, counts: counts[index] as RuleCounts }));
  }

  /** Creates or updates a manual rule; same identity keeps its counters. */
  async upsert(draft: RuleDraft): Promise<void> {
    const valid = validateRule(draft);
    const existing = this.rules.get(ruleId(valid.scope, valid.subject, valid.periodSeconds));
    if (existing?.origin === 'config') throw readOnly(existing);
    const at = this.now();
    const createdAt = existing?.createdAt ?? at;
    await this.options.ruleStore.upsert({ ...valid, createdAt, updatedAt: at });
    this.put(valid, 'manual', createdAt, at);
    this.rebuild();
  }

  /** Deletes a manual rule and its counters. */
  async remove(scope: RateLimitScope, subject: string, periodSeconds: number): Promise<void> {
    const rule = this.find(scope, subject, periodSeconds);
    if (rule.origin === 'config') throw readOnly(rule);
    await this.options.ruleStore.remove(rule.scope, rule.subject, rule.periodSeconds);
    this.rules.delete(rule.id);
    this.rebuild();
    await this.options.counters.forget(rule);
  }

  async resetOne(scope: RateLimitScope, subject: string, periodSeconds: number): Promise<void> {
    await this.options.counters.reset(this.find(scope, subject, periodSeconds));
  }

  resetAll(): Promise<void> {
    return this.options.counters.resetAll();
  }

  private find(scope: RateLimitScope, subject: string, periodSeconds: number): RateLimitRule {
    const normalized = validateRule({ scope, subject, periodSeconds, maxRequests: 1, maxTokens: null }).subject;
    const rule = this.rules.get(ruleId(scope, normalized, periodSeconds));
    if (rule === undefined) {
      throw notFound(`rate limit rule not found: ${scope} ${normalized} ${periodLabel(periodSeconds)}`, { code: 'rate_limit_not_found' });
    }
    return rule;
  }

  private put(draft: RuleDraft, origin: RateLimitRule['origin'], createdAt: number, updatedAt: number): void {
    const id = ruleId(draft.scope, draft.subject, draft.periodSeconds);
    const counterKey = this.rules.get(id)?.counterKey ?? `${id}#${(this.generation += 1)}`;
    this.rules.set(id, { ...draft, id, counterKey, origin, createdAt, updatedAt });
  }

  private rebuild(): void {
    this.index = new RuleIndex(this.rules.values());
  }
}

const scopeOrder: Record<RateLimitScope, number> = { user_path: 0, provider: 1, model: 2 };

function compareRules(left: RateLimitRule, right: RateLimitRule): number {
  return (
    scopeOrder[left.scope] - scopeOrder[right.scope] ||
    left.subject.toLowerCase().localeCompare(right.subject.toLowerCase()) ||
    left.periodSeconds - right.periodSeconds
  );
}

function readOnly(rule: RateLimitRule): GatewayError {
  return invalidRequest(
    `the ${periodLabel(rule.periodSeconds)} rule on ${rule.scope} ${rule.subject} comes from configuration and is read-only`,
    {
      status: 409,
      code: 'rule_read_only',
    },
  );
}
