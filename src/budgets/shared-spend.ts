import { userPathCovers } from '../core/user-path.ts';
import type { BudgetStore, SpendSlice } from './budget-store.ts';
import { periodWindow } from './periods.ts';
import type { SpendLedger } from './spend-ledger.ts';

export interface SharedSpendOptions {
  /**
   * How far behind the clock the frontier runs. A usage record is written a flush interval
   * (100 ms) after its response completes, so records with a timestamp older than this are
   * taken as all written; a later one (a backlog written after a database outage) is seen at
   * the next full read.
   */
  readonly lagMs?: number;
  /** How often each rule's spend is summed from scratch, the backstop for late records. */
  readonly fullReadMs?: number;
}

interface Settled {
  readonly windowStart: number;
  sum: number;
  readonly readAt: number;
}

/**
 * The spend of each budget rule in a usage table shared by several replicas (PostgreSQL),
 * followed incrementally. Per rule, the spend before a frontier (the clock minus `lagMs`, in
 * whole seconds) is summed once and then only extended; the spend after it is re-read at every
 * refresh, for every rule at once, with one query grouped by path and second
 * (`BudgetStore.spendBySecond`). A refresh therefore costs one query over the last minute of
 * usage, whatever the number of rules and the length of their periods, instead of one sum over
 * each rule's whole period.
 *
 * Staleness: spend written by another replica is seen at the next refresh (budget refresh
 * interval, 2 s by default) after its usage batch is written (usage flush interval, 100 ms by
 * default); a record written more than `lagMs` after its timestamp, within `fullReadMs`.
 */
export class SharedSpend {
  private readonly store: BudgetStore;
  private readonly lagMs: number;
  private readonly fullReadMs: number;
  private frontier: number | null = null;
  private readonly settled = new Map<SpendLedger, Settled>();

  constructor(store: BudgetStore, options: SharedSpendOptions = {}) {
    this.store = store;
    this.lagMs = options.lagMs ?? 60_000;
    this.fullReadMs = options.fullReadMs ?? 300_000;
  }

  /** The spend of each ledger's current period as the database holds it now. */
  async read(ledgers: readonly SpendLedger[], now: number): Promise<Map<SpendLedger, number>> {
    const previous = this.frontier;
    const frontier = Math.max(previous ?? 0, Math.floor((now - this.lagMs) / 1000) * 1000);
    const slices = await this.store.spendBySecond(previous ?? frontier);
    const spend = new Map<SpendLedger, number>();
    for (const ledger of ledgers) {
      const windowStart = periodWindow(ledger.rule.periodSeconds, now).start;
      let settled = this.settled.get(ledger);
      if (previous === null || settled === undefined || settled.windowStart !== windowStart || now - settled.readAt >= this.fullReadMs) {
        const sum = windowStart < frontier ? await this.store.spentSince(ledger.rule.userPath, windowStart, frontier) : 0;
        settled = { windowStart, sum, readAt: now };
        this.settled.set(ledger, settled);
      } else {
        // What moved past the frontier since the last refresh is final now.
        settled.sum += sumOf(slices, ledger.rule.userPath, Math.max(previous, windowStart), frontier);
      }
      spend.set(ledger, settled.sum + sumOf(slices, ledger.rule.userPath, Math.max(frontier, windowStart), Number.POSITIVE_INFINITY));
    }
    for (const ledger of this.settled.keys()) if (!spend.has(ledger)) this.settled.delete(ledger);
    this.frontier = frontier;
    return spend;
  }
}

/** Costs of the slices under `userPath` with `from <= second × 1000 < to`. */
function sumOf(slices: readonly SpendSlice[], userPath: string, from: number, to: number): number {
  let total = 0;
  for (const slice of slices) {
    const at = slice.second * 1000;
    if (at >= from && at < to && userPathCovers(userPath, slice.userPath)) total += slice.cost;
  }
  return total;
}
