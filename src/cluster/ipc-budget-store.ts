import { budgetIdentity } from '../budgets/budget-rules.ts';
import type { SharedBudgetStore } from '../budgets/budget-service.ts';
import { periodWindow } from '../budgets/periods.ts';
import type { SharedHold } from '../budgets/reservation.ts';
import type { SpendLedger } from '../budgets/spend-ledger.ts';
import type { BudgetAdmitArgs, LedgerKey } from './budget-owner.ts';
import type { PrimaryLink } from './primary-link.ts';

/**
 * A worker's budget reservations and spend, held by the primary (budget-owner.ts) for every
 * worker at once: the check and the hold are one step, so workers cannot all pass the same
 * remaining amount (the Redis store does the same across replicas).
 */
export class IpcBudgetStore implements SharedBudgetStore {
  private readonly link: PrimaryLink;
  private nextMember = 1;

  constructor(link: PrimaryLink) {
    this.link = link;
  }

  async admit(
    ledgers: readonly SpendLedger[],
    cost: number,
    now: number,
  ): Promise<{ hold: SharedHold } | { blockedBy: number; spent: number } | null> {
    const keys = ledgers.map((ledger) => keyOf(ledger, now));
    const member = `${this.link.workerId}:${this.nextMember++}`;
    const args: BudgetAdmitArgs = { ledgers: keys, cost, member, now };
    const answer = (await this.link.call('bg.admit', args)) as { blockedBy: number; spent: number } | { held: true };
    if ('blockedBy' in answer) return answer;
    const names = keys.map((key) => key.key);
    return {
      hold: {
        move: (next) => this.link.notify('bg.move', { keys: names, member, cost: next }),
        release: () => this.link.notify('bg.release', { keys: names, member }),
      },
    };
  }

  charge(ledgers: readonly SpendLedger[], cost: number, now: number): void {
    // Leaves before the response does: a listing on another worker right after it shows the spend.
    this.link.notify('bg.charge', { ledgers: ledgers.map((ledger) => keyOf(ledger, now)), cost }, true);
  }

  /** Null when the primary does not answer (it is gone): the listing falls back to this worker's ledgers. */
  async spent(ledgers: readonly SpendLedger[], now: number): Promise<readonly number[] | null> {
    const keys = ledgers.map((ledger) => keyOf(ledger, now).key);
    return (await this.link.call('bg.spent', keys).catch(() => null)) as number[] | null;
  }
}

function keyOf(ledger: SpendLedger, now: number): LedgerKey {
  const window = periodWindow(ledger.rule.periodSeconds, now);
  return {
    key: `${budgetIdentity(ledger.rule.userPath, ledger.rule.periodSeconds)}:${window.start}`,
    amount: ledger.rule.amount,
    floor: ledger.spent(now),
    end: window.end,
  };
}
