import type { Logger } from 'pino';
import type { BudgetRuleSettings } from './budget-settings.ts';
import { StoreReread } from '../core/store-reread.ts';
import { userPathCovers } from '../core/user-path.ts';
import { GatewayError, invalidRequest, notFound } from '../errors/gateway-error.ts';
import type { BudgetRow, BudgetStore } from './budget-store.ts';
import { budgetIdentity, makeBudgetRule, type BudgetRule } from './budget-rules.ts';
import { periodWindow } from './periods.ts';
import { holdOn, noReservation, type BudgetReservation, type SharedHold } from './reservation.ts';
import { SharedSpend } from './shared-spend.ts';
import { SpendLedger } from './spend-ledger.ts';

/**
 * Spend and reservations kept where every replica sees them at once (Redis): admission checks
 * and holds atomically across replicas. Null answers mean the store is unavailable (the
 * process's own ledgers decide alone).
 */
export interface SharedBudgetStore {
  /** Refuses (the index of a ledger whose spend plus holds reached its amount) or holds `cost` on each ledger. */
  admit(
    ledgers: readonly SpendLedger[],
    cost: number,
    now: number,
  ): Promise<{ hold: SharedHold } | { blockedBy: number; spent: number } | null>;
  /** Adds a completed request's cost to each ledger's shared spend. */
  charge(ledgers: readonly SpendLedger[], cost: number, now: number): void;
  close?(): void;
}

export interface BudgetServiceOptions {
  store: BudgetStore;
  configRules: readonly BudgetRuleSettings[];
  /**
   * Runs a database read while no usage batch is written, with the sequence number up to
   * which usage records are in the database (UsageRecorder.whileSettled).
   */
  whileSettled: <T>(read: (settledThrough: number) => Promise<T>) => Promise<T>;
  /**
   * True when other gateway processes write to the same database (PostgreSQL): their spend is
   * followed incrementally (shared-spend.ts) at every refresh.
   */
  sharedDatabase: boolean;
  /** Reservations and spend shared by replicas at once (Redis); null keeps them in this process. */
  sharedStore?: SharedBudgetStore | null;
  refreshIntervalMs: number;
  logger: Logger;
  now?: () => number;
}

export interface BudgetStatus {
  rule: BudgetRule;
  spent: number;
  remaining: number;
  periodStart: number;
  periodEnd: number;
}

/**
 * Budgets (CONTRACT section 7): rules from configuration and the admin API, spend per rule
 * from durable usage plus in-memory charges, and the check made before each upstream call.
 */
export class BudgetService {
  private readonly options: BudgetServiceOptions;
  private readonly ledgers = new Map<string, SpendLedger>();
  /** Every charge whose usage record may not be in the database yet, for rules created meanwhile. */
  private unsettled: Array<{ seq: number; userPath: string; cost: number; at: number }> = [];
  private readonly now: () => number;
  /** Every refresh reads the rules, then the spend, after it was asked for (an admin write through another worker is seen). */
  private readonly refreshes: StoreReread<BudgetRow[]>;
  private readonly sharedSpend: SharedSpend;

  constructor(options: BudgetServiceOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.sharedSpend = new SharedSpend(options.store);
    this.refreshes = new StoreReread({
      read: () => options.store.list(),
      apply: (rows) => this.applyRules(rows),
      after: () => this.refreshSpend(),
      failed: (error) => options.logger.warn({ err: error }, 'budget refresh failed'),
    });
  }

  async start(): Promise<void> {
    const at = this.now();
    for (const rule of this.options.configRules) {
      this.ledgers.set(
        budgetIdentity(rule.userPath, rule.periodSeconds),
        new SpendLedger(makeBudgetRule({ ...rule, origin: 'config', createdAt: at, updatedAt: at })),
      );
    }
    for (const row of await this.options.store.list()) {
      const identity = budgetIdentity(row.userPath, row.periodSeconds);
      if (this.ledgers.get(identity)?.rule.origin === 'config') continue;
      this.ledgers.set(identity, new SpendLedger(makeBudgetRule({ ...row, origin: 'manual' })));
    }
    await this.refresh();
    this.refreshes.every(this.options.refreshIntervalMs);
  }

  stop(): void {
    this.refreshes.stop();
    this.options.sharedStore?.close?.();
  }

  /**
   * Throws 429 `budget_exceeded` when a rule covering the path has spent its amount, counting
   * what running requests hold (reservations).
   */
  check(userPath: string): void {
    if (this.ledgers.size === 0) return;
    const now = this.now();
    const blocking = this.blocking(this.covering(userPath), now);
    if (blocking !== null) throw budgetExceeded(blocking.ledger.rule, blocking.spent, retryAfter(blocking.ledger, now));
  }

  /**
   * Admission with a reservation: refuses like `check`, else holds `cost` (an estimate of the
   * request's largest cost, or a function computing it when needed; null when its price is
   * unknown: nothing is held) on every rule
   * covering the path until the reservation is released. A request is admitted while its
   * rules have anything left, so spend passes an amount by at most one request's estimate.
   * With a shared store the check and the hold are one atomic step across replicas.
   */
  async reserve(userPath: string, cost: number | null | (() => number | null)): Promise<BudgetReservation> {
    if (this.ledgers.size === 0) return noReservation;
    const now = this.now();
    const covering = this.covering(userPath);
    if (covering.length === 0) return noReservation;
    const local = this.blocking(covering, now);
    if (local !== null) throw budgetExceeded(local.ledger.rule, local.spent, retryAfter(local.ledger, now));
    // Estimated only now: a request no budget covers costs nothing to admit.
    const estimate = typeof cost === 'function' ? cost() : cost;
    const held = estimate === null || estimate <= 0 ? 0 : estimate;
    const shared = await this.options.sharedStore?.admit(covering, held, now);
    if (shared !== undefined && shared !== null && 'blockedBy' in shared) {
      const ledger = covering[shared.blockedBy] as SpendLedger;
      throw budgetExceeded(ledger.rule, shared.spent, retryAfter(ledger, now));
    }
    return held === 0 ? noReservation : holdOn(covering, held, shared?.hold ?? null);
  }

  /** Whether a rule covers the path: when none does, `reserve` holds nothing and refuses nothing. */
  covers(userPath: string): boolean {
    if (this.ledgers.size === 0) return false;
    for (const ledger of this.ledgers.values()) if (userPathCovers(ledger.rule.userPath, userPath)) return true;
    return false;
  }

  private covering(userPath: string): SpendLedger[] {
    const covering: SpendLedger[] = [];
    for (const ledger of this.ledgers.values()) if (userPathCovers(ledger.rule.userPath, userPath)) covering.push(ledger);
    return covering;
  }

  /** The covering rule that blocks longest, if any has spent (or holds) its amount. */
  private blocking(covering: readonly SpendLedger[], now: number): { ledger: SpendLedger; spent: number } | null {
    let blocking: { ledger: SpendLedger; spent: number; end: number } | null = null;
    for (const ledger of covering) {
      const spent = ledger.spent(now);
      if (spent + ledger.reserved < ledger.rule.amount) continue;
      const end = periodWindow(ledger.rule.periodSeconds, now).end;
      if (blocking === null || end > blocking.end) blocking = { ledger, spent, end };
    }
    return blocking;
  }

  /** Adds a completed request's cost to every rule covering its path. */
  charge(userPath: string, cost: number | null, seq: number, at: number): void {
    if (cost === null || cost <= 0) return;
    this.unsettled.push({ seq, userPath, cost, at });
    const covering = this.covering(userPath);
    for (const ledger of covering) ledger.charge(seq, cost, at);
    if (covering.length > 0) this.options.sharedStore?.charge(covering, cost, at);
  }

  /** Every rule with its spend, sorted by path then period. */
  statuses(filter?: (rule: BudgetRule) => boolean): BudgetStatus[] {
    const now = this.now();
    return sortStatuses(this.selected(filter).map((ledger) => statusOf(ledger, ledger.spent(now), now)));
  }

  private selected(filter?: (rule: BudgetRule) => boolean): SpendLedger[] {
    return [...this.ledgers.values()].filter((ledger) => filter?.(ledger.rule) ?? true);
  }

  /** Creates or updates a manual rule; editing the amount keeps the period's spend. */
  async upsert(userPath: string, periodSeconds: number, amount: number): Promise<void> {
    // Catch up with the database first: the rule may have been made through another replica.
    await this.refreshes.readOnce();
    const identity = budgetIdentity(userPath, periodSeconds);
    const existing = this.ledgers.get(identity);
    if (existing?.rule.origin === 'config') throw readOnly(existing.rule);
    const at = this.now();
    const rule = makeBudgetRule({
      userPath,
      periodSeconds,
      amount,
      origin: 'manual',
      createdAt: existing?.rule.createdAt ?? at,
      updatedAt: at,
    });
    await this.options.store.upsert({ userPath, period: rule.period, periodSeconds, amount, createdAt: rule.createdAt, updatedAt: at });
    this.refreshes.wrote();
    if (existing) {
      existing.rule = rule;
      return;
    }
    const ledger = new SpendLedger(rule);
    this.ledgers.set(identity, ledger);
    await this.rebase(ledger);
  }

  /**
   * Hot reload: replaces the configuration rules. A rule kept (same path and period) keeps its
   * period's spend whatever its new amount; a new one reads its spend at once; a removed one goes
   * (a stored rule it shadowed comes back with the refresh).
   */
  async applyConfigRules(rules: readonly BudgetRuleSettings[]): Promise<void> {
    const at = this.now();
    const declared = new Set<string>();
    const added: SpendLedger[] = [];
    for (const fields of rules) {
      const identity = budgetIdentity(fields.userPath, fields.periodSeconds);
      declared.add(identity);
      const existing = this.ledgers.get(identity);
      const createdAt = existing?.rule.origin === 'config' ? existing.rule.createdAt : at;
      const rule = makeBudgetRule({ ...fields, origin: 'config', createdAt, updatedAt: at });
      if (existing !== undefined) existing.rule = rule;
      else {
        const ledger = new SpendLedger(rule);
        this.ledgers.set(identity, ledger);
        added.push(ledger);
      }
    }
    for (const [identity, ledger] of this.ledgers) {
      if (ledger.rule.origin === 'config' && !declared.has(identity)) this.ledgers.delete(identity);
    }
    for (const ledger of added) await this.rebase(ledger);
    await this.refresh();
  }

  async remove(userPath: string, periodSeconds: number): Promise<void> {
    await this.refreshes.readOnce();
    const identity = budgetIdentity(userPath, periodSeconds);
    const existing = this.ledgers.get(identity);
    if (existing === undefined)
      throw notFound(`no budget for ${userPath} with a period of ${periodSeconds}s`, { code: 'budget_not_found' });
    if (existing.rule.origin === 'config') throw readOnly(existing.rule);
    await this.options.store.remove(userPath, periodSeconds);
    this.refreshes.wrote();
    this.ledgers.delete(identity);
  }

  /**
   * Re-reads the rules (changed through another replica's admin API) and the spend (other
   * replicas' on a shared database, or a period that rolled over).
   */
  refresh(): Promise<void> {
    return this.refreshes.run();
  }

  /** The spend: other replicas' on a shared database, else a period that rolled over, and the charges now settled. */
  private async refreshSpend(): Promise<void> {
    const now = this.now();
    await this.options.whileSettled(async (settled) => {
      const ledgers = [...this.ledgers.values()];
      const shared = this.options.sharedDatabase ? await this.sharedSpend.read(ledgers, now) : null;
      for (const ledger of ledgers) {
        if (shared !== null)
          this.applyBaseline(ledger, periodWindow(ledger.rule.periodSeconds, now).start, shared.get(ledger) ?? 0, settled);
        else if (!ledger.isCurrent(now)) await this.rebaseSettled(ledger, settled);
        else ledger.fold(settled);
      }
      this.unsettled = this.unsettled.filter((charge) => charge.seq > settled);
    });
  }

  /**
   * Applies the stored manual rules as another replica left them: new ones get a ledger (read at
   * once by the refresh), an amount edit keeps the period's spend, deleted ones go.
   */
  private applyRules(rows: readonly BudgetRow[]): void {
    const stored = new Set<string>();
    for (const row of rows) {
      const identity = budgetIdentity(row.userPath, row.periodSeconds);
      stored.add(identity);
      const existing = this.ledgers.get(identity);
      if (existing?.rule.origin === 'config') continue;
      const rule = makeBudgetRule({ ...row, origin: 'manual' });
      if (existing === undefined) this.ledgers.set(identity, new SpendLedger(rule));
      else existing.rule = rule;
    }
    for (const [identity, ledger] of this.ledgers) {
      if (ledger.rule.origin === 'manual' && !stored.has(identity)) this.ledgers.delete(identity);
    }
  }

  private rebase(ledger: SpendLedger): Promise<void> {
    return this.options.whileSettled((settled) => this.rebaseSettled(ledger, settled));
  }

  /**
   * Baseline from the database (which holds every record up to `settled`, and no batch is
   * being written), then the charges of records not yet written, including those made before
   * the rule existed.
   */
  private async rebaseSettled(ledger: SpendLedger, settled: number): Promise<void> {
    const window = periodWindow(ledger.rule.periodSeconds, this.now());
    const baseline = await this.options.store.spentSince(ledger.rule.userPath, window.start);
    this.applyBaseline(ledger, window.start, baseline, settled);
  }

  private applyBaseline(ledger: SpendLedger, windowStart: number, baseline: number, settled: number): void {
    ledger.rebase(windowStart, baseline, Number.POSITIVE_INFINITY);
    for (const charge of this.unsettled) {
      if (charge.seq > settled && userPathCovers(ledger.rule.userPath, charge.userPath)) ledger.charge(charge.seq, charge.cost, charge.at);
    }
  }
}

function statusOf(ledger: SpendLedger, spent: number, now: number): BudgetStatus {
  const window = periodWindow(ledger.rule.periodSeconds, now);
  return { rule: ledger.rule, spent, remaining: Math.max(0, ledger.rule.amount - spent), periodStart: window.start, periodEnd: window.end };
}

function sortStatuses(statuses: BudgetStatus[]): BudgetStatus[] {
  return statuses.sort(
    (left, right) => left.rule.userPath.localeCompare(right.rule.userPath) || left.rule.periodSeconds - right.rule.periodSeconds,
  );
}

/**
 * The refusal. A budget not spent yet but held by requests in flight (reservations) may free
 * up within seconds: Retry-After is then 1, else the end of the period.
 */
function budgetExceeded(rule: BudgetRule, spent: number, retryAfterSeconds: number): GatewayError {
  const held = spent < rule.amount;
  const message = held
    ? `budget exceeded for ${rule.userPath}: the rest of the ${rule.period} budget of $${rule.amount} ($${spent.toFixed(6)} spent) is reserved by requests in flight`
    : `budget exceeded for ${rule.userPath}: ${rule.period} budget of $${rule.amount} spent ($${spent.toFixed(6)})`;
  return new GatewayError('rate_limit_error', message, {
    code: 'budget_exceeded',
    provider: 'budget',
    headers: { 'Retry-After': String(held ? 1 : retryAfterSeconds) },
  });
}

function retryAfter(ledger: SpendLedger, now: number): number {
  return Math.max(1, Math.ceil((periodWindow(ledger.rule.periodSeconds, now).end - now) / 1000));
}

function readOnly(rule: BudgetRule): GatewayError {
  return invalidRequest(`the ${rule.period} budget of ${rule.userPath} comes from configuration and is read-only`, {
    status: 409,
    code: 'budget_read_only',
  });
}
