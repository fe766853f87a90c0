import type { WorkerHub } from './worker-hub.ts';

// Budget spend and reservations shared by the workers of one instance, kept by the primary:
// the same check-then-hold step as the Redis script of src/budgets/redis-budget-store.ts,
// atomic because the primary runs one call at a time. Holds are recorded per worker, so a
// worker that dies gives its reservations back at once.

/** One ledger of an admission: its key (rule identity and period window), amount and end. */
export interface LedgerKey {
  key: string;
  amount: number;
  /** What the asking worker knows from the database: the shared spend is never below it. */
  floor: number;
  /** The period window's end (epoch ms): the entry is dropped after it. */
  end: number;
}

export interface BudgetAdmitArgs {
  ledgers: LedgerKey[];
  cost: number;
  member: string;
  now: number;
}

interface Entry {
  spent: number;
  end: number;
  /** member -> held USD */
  held: Map<string, { cost: number; workerId: number }>;
}

export class BudgetOwner {
  private readonly entries = new Map<string, Entry>();

  serve(hub: WorkerHub): void {
    hub.handle('bg.admit', (workerId, args) => this.admit(workerId, args as BudgetAdmitArgs));
    hub.handle('bg.charge', (_workerId, args) => {
      const { ledgers, cost } = args as { ledgers: LedgerKey[]; cost: number };
      for (const ledger of ledgers) this.entryOf(ledger).spent += cost;
      return null;
    });
    hub.handle('bg.move', (workerId, args) => {
      const { keys, member, cost } = args as { keys: string[]; member: string; cost: number };
      for (const key of keys) this.entries.get(key)?.held.set(member, { cost, workerId });
      return null;
    });
    hub.handle('bg.spent', (_workerId, keys) => (keys as string[]).map((key) => this.entries.get(key)?.spent ?? 0));
    hub.handle('bg.release', (_workerId, args) => {
      const { keys, member } = args as { keys: string[]; member: string };
      for (const key of keys) this.entries.get(key)?.held.delete(member);
      return null;
    });
  }

  /** Refuses with the index of the first ledger whose spend plus holds reached its amount, else holds `cost` on each. */
  admit(workerId: number, { ledgers, cost, member, now }: BudgetAdmitArgs): { blockedBy: number; spent: number } | { held: true } {
    this.prune(now);
    const entries = ledgers.map((ledger) => this.entryOf(ledger));
    for (const [index, entry] of entries.entries()) {
      const ledger = ledgers[index] as LedgerKey;
      entry.spent = Math.max(entry.spent, ledger.floor);
      let held = 0;
      for (const hold of entry.held.values()) held += hold.cost;
      if (entry.spent + held >= ledger.amount) return { blockedBy: index, spent: entry.spent };
    }
    if (cost > 0) for (const entry of entries) entry.held.set(member, { cost, workerId });
    return { held: true };
  }

  /** Drops the holds of a worker that died. */
  workerGone(workerId: number): void {
    for (const entry of this.entries.values()) {
      for (const [member, hold] of entry.held) if (hold.workerId === workerId) entry.held.delete(member);
    }
  }

  private entryOf(ledger: LedgerKey): Entry {
    let entry = this.entries.get(ledger.key);
    if (entry === undefined) {
      entry = { spent: 0, end: ledger.end, held: new Map() };
      this.entries.set(ledger.key, entry);
    }
    return entry;
  }

  private prune(now: number): void {
    for (const [key, entry] of this.entries) if (entry.end < now && entry.held.size === 0) this.entries.delete(key);
  }
}
