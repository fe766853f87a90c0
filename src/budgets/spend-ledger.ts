import { periodWindow } from './periods.ts';
import type { BudgetRule } from './budget-rules.ts';

interface Charge {
  seq: number;
  cost: number;
  at: number;
}

/**
 * The spend of one budget rule in its current period: a baseline read from the database plus
 * charges made in memory since, so a response's cost counts at once. A refresh replaces the
 * baseline and drops the charges the database already held when it was read.
 */
export class SpendLedger {
  rule: BudgetRule;
  /** USD held by admitted requests still running (budget reservations), released as they end. */
  reserved = 0;
  private windowStart = Number.NaN;
  private baseline = 0;
  private charges: Charge[] = [];
  private chargeSum = 0;

  constructor(rule: BudgetRule) {
    this.rule = rule;
  }

  charge(seq: number, cost: number, at: number): void {
    if (cost <= 0) return;
    this.charges.push({ seq, cost, at });
    this.chargeSum += cost;
  }

  /** Spend in the period containing `now`. */
  spent(now: number): number {
    const window = periodWindow(this.rule.periodSeconds, now);
    if (window.start === this.windowStart) return this.baseline + this.chargeSum;
    // The period rolled over since the last refresh: only charges inside the new one count.
    return this.charges.reduce((total, charge) => (charge.at >= window.start ? total + charge.cost : total), 0);
  }

  /** Whether the baseline belongs to the period containing `now`. */
  isCurrent(now: number): boolean {
    return periodWindow(this.rule.periodSeconds, now).start === this.windowStart;
  }

  /** Sets the baseline read at a moment when every charge up to `settledThrough` was in the database. */
  rebase(windowStart: number, baseline: number, settledThrough: number): void {
    this.windowStart = windowStart;
    this.baseline = baseline;
    this.charges = this.charges.filter((charge) => charge.seq > settledThrough && charge.at >= windowStart);
    this.chargeSum = this.charges.reduce((total, charge) => total + charge.cost, 0);
  }

  /** Folds settled charges into the baseline without reading the database (sole writer). */
  fold(settledThrough: number): void {
    let index = 0;
    while (index < this.charges.length && (this.charges[index]?.seq ?? Infinity) <= settledThrough) index += 1;
    if (index === 0) return;
    const settled = this.charges.splice(0, index);
    const moved = settled.reduce((total, charge) => (charge.at >= this.windowStart ? total + charge.cost : total), 0);
    this.baseline += moved;
    this.chargeSum -= settled.reduce((total, charge) => total + charge.cost, 0);
  }
}
