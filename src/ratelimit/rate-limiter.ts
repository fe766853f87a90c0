import type { Logger } from 'pino';
import { StoreReread } from '../core/store-reread.ts';
import { invalidRequest, notFound, type GatewayError } from '../errors/gateway-error.ts';
import type { HeldSlots, RateLimitCounterStore, RuleCounts, SlotLease } from './counter-store.ts';
import { periodLabel } from './periods.ts';
import { rateLimitExceeded, successHeaders } from './rejection.ts';
import type { RateLimitRuleRow, RateLimitRuleStore } from './rule-store.ts';
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
  /**
   * How often the stored manual rules are re-read, so rules changed through another replica's
   * admin API take effect here (and the admin list shows them); no re-reading when absent.
   */
  reloadIntervalMs?: number;
  /** How often live concurrency leases are renewed, for stores whose slots expire (a third of their TTL). */
  leaseRenewalMs?: number;
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
  /** Concurrency slots of live admissions, renewed periodically in stores whose slots expire. */
  private readonly live = new Set<HeldSlots>();
  /** Creation time of each deleted rule, so a rule recreated at once still gets a new counter key. */
  private readonly retired = new Map<string, number>();
  /** Every reload reads the store after it was asked for (a rule written through another worker is seen). */
  private readonly rereads: StoreReread<RateLimitRuleRow[]>;
  private renewal: NodeJS.Timeout | null = null;
  /** Counter updates sent after admission (releases, refunds, tokens) not yet answered, and who waits for none. */
  private pending = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(options: RateLimiterOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.rereads = new StoreReread({
      read: () => options.ruleStore.list(),
      apply: async (rows) => {
        for (const rule of this.applyStored(rows)) await options.counters.forget(rule);
      },
      failed: (error) => options.logger.warn({ err: error }, 'rate-limit rule reload failed'),
    });
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
    const { reloadIntervalMs, leaseRenewalMs } = this.options;
    if (reloadIntervalMs !== undefined) this.rereads.every(reloadIntervalMs);
    if (leaseRenewalMs !== undefined && this.options.counters.renewLeases !== undefined) {
      this.renewal = setInterval(
        () =>
          void this.renewLeases().catch((error: unknown) => this.options.logger.warn({ err: error }, 'rate-limit lease renewal failed')),
        leaseRenewalMs,
      );
      this.renewal.unref();
    }
  }

  /** Stops the reload and renewal timers. */
  stop(): void {
    this.rereads.stop();
    if (this.renewal !== null) clearInterval(this.renewal);
    this.renewal = null;
  }

  /**
   * Applies the stored manual rules changed by other replicas (SEED-SPEC "States and
   * transitions"): a cap edit keeps the counters; a rule deleted, or deleted and created again
   * (a new creation time), loses them. Configuration rules are never touched.
   */
  reload(): Promise<void> {
    return this.rereads.run();
  }

  /**
   * Hot reload: replaces the configuration rules. A rule kept (same scope, subject and period)
   * keeps its counters, whatever its new caps; a rule no longer declared loses them (a stored
   * manual rule it shadowed comes back with the next reload). Swapped in one step.
   */
  async applyConfigRules(drafts: readonly RuleDraft[]): Promise<void> {
    const at = this.now();
    const declared = new Map(drafts.map((draft) => [ruleId(draft.scope, draft.subject, draft.periodSeconds), validateRule(draft)]));
    const dropped = [...this.rules.values()].filter((rule) => rule.origin === 'config' && !declared.has(rule.id));
    for (const rule of dropped) this.rules.delete(rule.id);
    for (const [id, draft] of declared) {
      const existing = this.rules.get(id);
      if (existing?.origin === 'manual') this.rules.delete(id);
      this.put(draft, 'config', existing?.origin === 'config' ? existing.createdAt : at, at);
    }
    this.rebuild();
    for (const rule of dropped) await this.options.counters.forget(rule);
    await this.reload();
  }

  get ruleCount(): number {
    return this.rules.size;
  }

  hasTokenRules(): boolean {
    return [...this.rules.values()].some((rule) => rule.maxTokens !== null);
  }

  /** Whether any rule counts this request: when none does, `admit` admits at once and holds nothing. */
  matches(subject: RouteSubject, request: AdmissionRequest = {}): boolean {
    return this.index.match(subject, request.routeRules ?? true, request.pathRules ?? true).length > 0;
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
    const { lease } = result;
    const whole = this.holding(rules, holdSlot, headers, lease);
    let split = false;
    return {
      headers,
      release: () => (split ? undefined : whole.release()),
      refund: () => (split ? undefined : whole.refund()),
      split: () => {
        split = true;
        whole.detach();
        const path = rules.filter((rule) => rule.scope === 'user_path');
        const route = rules.filter((rule) => rule.scope !== 'user_path');
        return { path: this.holding(path, holdSlot, headers, lease), route: this.holding(route, holdSlot, {}, lease) };
      },
    };
  }

  /**
   * An admission over `rules`: releases their slots, or refunds them, exactly once, in the store
   * that admitted it (`lease`). Its slots stay in the renewal set until then; `detach` takes
   * them out without releasing (the admission was split into parts that hold them instead).
   */
  private holding(
    rules: readonly RateLimitRule[],
    holdSlot: boolean,
    headers: Readonly<Record<string, string>>,
    lease: SlotLease | undefined,
  ): Admission & { detach(): void } {
    const counters = this.options.counters;
    const slots = holdSlot ? rules.filter((rule) => rule.periodSeconds === 0) : [];
    const counted = rules.filter((rule) => rule.periodSeconds > 0 || holdSlot);
    const held: HeldSlots | null = slots.length > 0 && lease !== undefined ? { rules: slots, lease } : null;
    if (held !== null) this.live.add(held);
    let settled = false;
    const settle = (action: () => Promise<void>): void => {
      if (held !== null) this.live.delete(held);
      if (settled) return;
      settled = true;
      this.track(action(), 'rate-limit counter update failed');
    };
    const admission = {
      headers,
      release: () => settle(() => (slots.length > 0 ? counters.release(slots, lease) : Promise.resolve())),
      refund: () => settle(() => counters.refund(counted, this.now(), lease)),
      split: () => ({ path: admission, route: unlimited }),
      detach: () => {
        if (held !== null) this.live.delete(held);
      },
    };
    return admission;
  }

  /** Charges a completed response's tokens to the rules of its path, provider and executed model. */
  recordTokens(subject: RouteSubject, tokens: number): void {
    if (tokens <= 0 || this.index.size === 0) return;
    const rules = this.index.match(subject).filter((rule) => rule.periodSeconds > 0);
    if (rules.length === 0) return;
    this.track(this.options.counters.addTokens(rules, tokens, this.now()), 'token accounting failed');
  }

  /** Resolves once every release, refund and token update sent so far has been applied. */
  async idle(): Promise<void> {
    while (this.pending > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** A count, not a Set of promises: V8 reallocates a Set that a delete empties, and `finally` adds promises (ADR 27). */
  private track(update: Promise<void>, failure: string): void {
    this.pending += 1;
    update.then(this.settled, (error: unknown) => {
      this.settled();
      this.options.logger.error({ err: error }, failure);
    });
  }

  private readonly settled = (): void => {
    this.pending -= 1;
    if (this.pending > 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  };

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

  /**
   * Creates or updates a manual rule; same identity keeps its counters. Admin operations first
   * catch up with the database, so they act on what another replica just did too.
   */
  async upsert(draft: RuleDraft): Promise<void> {
    const valid = validateRule(draft);
    await this.reload();
    const existing = this.rules.get(ruleId(valid.scope, valid.subject, valid.periodSeconds));
    if (existing?.origin === 'config') throw readOnly(existing);
    const at = this.now();
    const createdAt =
      existing?.createdAt ?? Math.max(at, (this.retired.get(ruleId(valid.scope, valid.subject, valid.periodSeconds)) ?? 0) + 1);
    await this.options.ruleStore.upsert({ ...valid, createdAt, updatedAt: at });
    this.rereads.wrote();
    this.put(valid, 'manual', createdAt, at);
    this.rebuild();
  }

  /** Deletes a manual rule and its counters. */
  async remove(scope: RateLimitScope, subject: string, periodSeconds: number): Promise<void> {
    await this.reload();
    const rule = this.find(scope, subject, periodSeconds);
    if (rule.origin === 'config') throw readOnly(rule);
    await this.options.ruleStore.remove(rule.scope, rule.subject, rule.periodSeconds);
    this.rereads.wrote();
    this.retired.set(rule.id, rule.createdAt);
    this.rules.delete(rule.id);
    this.rebuild();
    await this.options.counters.forget(rule);
  }

  async resetOne(scope: RateLimitScope, subject: string, periodSeconds: number): Promise<void> {
    await this.reload();
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

  /**
   * Adds or edits a rule. Its counter key is the identity plus what tells one life of the rule
   * from the next, the same on every replica: `config`, or the creation time of a manual rule.
   * Edits keep the key; a rule deleted and created again gets a new one, so a slot taken under
   * the old rule can never free a slot of the new one, here or in a shared store.
   */
  private put(draft: RuleDraft, origin: RateLimitRule['origin'], createdAt: number, updatedAt: number): void {
    const id = ruleId(draft.scope, draft.subject, draft.periodSeconds);
    const counterKey = this.rules.get(id)?.counterKey ?? `${id}#${origin === 'config' ? 'config' : createdAt}`;
    this.rules.set(id, { ...draft, id, counterKey, origin, createdAt, updatedAt });
  }

  /** Brings the manual rules in line with the stored rows; returns the rules whose counters end. */
  private applyStored(rows: readonly RateLimitRuleRow[]): RateLimitRule[] {
    const stored = new Set<string>();
    const dropped: RateLimitRule[] = [];
    let changed = false;
    for (const row of rows) {
      const id = ruleId(row.scope, row.subject, row.periodSeconds);
      stored.add(id);
      const existing = this.rules.get(id);
      if (existing?.origin === 'config' || (existing !== undefined && sameRule(existing, row))) continue;
      if (existing !== undefined && existing.createdAt !== row.createdAt) {
        dropped.push(existing);
        this.rules.delete(id);
      }
      this.put(row, 'manual', row.createdAt, row.updatedAt);
      changed = true;
    }
    for (const rule of this.rules.values()) {
      if (rule.origin === 'manual' && !stored.has(rule.id)) dropped.push(rule);
    }
    for (const rule of dropped) if (!stored.has(rule.id)) this.rules.delete(rule.id);
    if (changed || dropped.length > 0) this.rebuild();
    return dropped;
  }

  private async renewLeases(): Promise<void> {
    if (this.live.size > 0) await this.options.counters.renewLeases?.([...this.live], this.now());
  }

  private rebuild(): void {
    this.index = new RuleIndex(this.rules.values());
  }
}

function sameRule(rule: RateLimitRule, row: RateLimitRuleRow): boolean {
  return (
    rule.createdAt === row.createdAt &&
    rule.updatedAt === row.updatedAt &&
    rule.subject === row.subject &&
    rule.maxRequests === row.maxRequests &&
    rule.maxTokens === row.maxTokens
  );
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
