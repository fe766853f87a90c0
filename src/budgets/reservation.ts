import type { SpendLedger } from './spend-ledger.ts';

/**
 * A request's hold on the budgets covering its path, taken at admission (an estimate of its
 * largest cost) and given back when its response ends; its real cost is charged meanwhile by
 * the usage report, so the two overlap for a moment rather than leave a gap.
 */
export interface BudgetReservation {
  /** The amount held, USD. */
  readonly cost: number;
  /** Holds `cost` instead (a failover to a target with another price); never refuses. */
  move(cost: number): void;
  /** Gives the hold back; safe to call more than once. */
  release(): void;
}

export const noReservation: BudgetReservation = Object.freeze({ cost: 0, move: () => undefined, release: () => undefined });

/** The part of a reservation kept in a store shared by replicas (Redis). */
export interface SharedHold {
  move(cost: number): void;
  release(): void;
}

/** Holds `cost` on each ledger in this process, plus the shared hold when there is one. */
export function holdOn(ledgers: readonly SpendLedger[], cost: number, shared: SharedHold | null): BudgetReservation {
  let held = cost;
  let released = false;
  for (const ledger of ledgers) ledger.reserved += held;
  return {
    get cost() {
      return released ? 0 : held;
    },
    move(next: number) {
      if (released || next === held) return;
      for (const ledger of ledgers) ledger.reserved += next - held;
      held = next;
      shared?.move(next);
    },
    release() {
      if (released) return;
      released = true;
      for (const ledger of ledgers) ledger.reserved = Math.max(0, ledger.reserved - held);
      shared?.release();
    },
  };
}
