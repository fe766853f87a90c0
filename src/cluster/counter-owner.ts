import type { AdmissionOptions, AdmissionResult } from '../ratelimit/counter-store.ts';
import { MemoryCounterStore } from '../ratelimit/memory-counter-store.ts';
import type { RateLimitRule } from '../ratelimit/rules.ts';
import { fromWire, fromWireRules, type WireRule } from './rule-wire.ts';
import type { WorkerHub } from './worker-hub.ts';

// The rate-limit counters of a multi-worker gateway with the memory store: one
// MemoryCounterStore in the primary, so that each rule keeps ONE counter per instance
// (SEED-SPEC "Limits"). Workers ask it over IPC (ipc-counter-store.ts). Concurrency slots
// are recorded per worker as leases, so that a worker that dies gives its slots back.

export interface AdmitArgs {
  rules: RateLimitRule[];
  options: AdmissionOptions;
  nowMs: number;
}

export interface ReleaseArgs {
  rules: RateLimitRule[];
  lease?: string;
  nowMs?: number;
}

export interface TokenArgs {
  rules: RateLimitRule[];
  tokens: number;
  nowMs: number;
}

/** The arguments as they cross the channel: rules in their wire form. */
type Wired<T extends { rules: RateLimitRule[] }> = Omit<T, 'rules'> & { rules: WireRule[] };

interface Lease {
  readonly workerId: number;
  /** The concurrency rules still held, by counter key (an admission may be released in parts). */
  readonly slots: Map<string, RateLimitRule>;
}

export class CounterOwner {
  private readonly store = new MemoryCounterStore();
  private readonly leases = new Map<string, Lease>();
  private nextLease = 1;

  /** Registers the `rl.*` operations on the hub; rules arrive in their wire form (rule-wire.ts). */
  serve(hub: WorkerHub): void {
    hub.handle('rl.admit', (workerId, args) => {
      const { rules, options, nowMs } = args as Wired<AdmitArgs>;
      return this.admitOrRecheck(workerId, { rules: fromWireRules(rules), options, nowMs });
    });
    hub.handle('rl.release', (_workerId, args) => {
      const { rules, lease } = args as Wired<ReleaseArgs>;
      return this.release({ rules: fromWireRules(rules), lease });
    });
    hub.handle('rl.refund', (_workerId, args) => {
      const { rules, lease, nowMs } = args as Wired<ReleaseArgs>;
      return this.refund({ rules: fromWireRules(rules), lease, nowMs });
    });
    hub.handle('rl.addTokens', (_workerId, args) => {
      const { rules, tokens, nowMs } = args as Wired<TokenArgs>;
      return this.store.addTokens(fromWireRules(rules), tokens, nowMs);
    });
    hub.handle('rl.hasCapacity', (_workerId, args) => {
      const { rules, enforceTokens, nowMs } = args as { rules: WireRule[]; enforceTokens: boolean; nowMs: number };
      return this.store.hasCapacity(fromWireRules(rules), enforceTokens, nowMs);
    });
    hub.handle('rl.counts', (_workerId, args) => {
      const { rules, nowMs } = args as { rules: WireRule[]; nowMs: number };
      return this.store.counts(fromWireRules(rules), nowMs);
    });
    hub.handle('rl.reset', (_workerId, args) => this.store.reset(fromWire(args as WireRule)));
    hub.handle('rl.resetAll', () => this.store.resetAll());
    hub.handle('rl.forget', (_workerId, args) => this.store.forget(fromWire(args as WireRule)));
  }

  /**
   * `admit`, with a refusal checked again once this turn of the event loop is over. Each worker
   * has a channel of its own, read in no set order: a worker sends a release before the answer
   * that lets its client ask again, but the primary can read that next request's admission (come
   * through the other worker) first, in the same poll phase. Its second check sees the release.
   */
  admitOrRecheck(workerId: number, args: AdmitArgs): AdmissionResult | Promise<AdmissionResult> {
    const first = this.admit(workerId, args);
    if (first.admitted) return first;
    return new Promise((resolve) => setImmediate(() => resolve(this.admit(workerId, args))));
  }

  /** Check all, commit all (synchronously, so atomic across workers); a slot taken is leased to the worker. */
  admit(workerId: number, { rules, options, nowMs }: AdmitArgs): AdmissionResult {
    const result = this.store.admitNow(rules, options, nowMs);
    if (!result.admitted) return result;
    const slots = options.holdSlot ? rules.filter((rule) => rule.periodSeconds === 0) : [];
    if (slots.length === 0) return result;
    const id = `${workerId}:${this.nextLease++}`;
    this.leases.set(id, { workerId, slots: new Map(slots.map((rule) => [rule.counterKey, rule])) });
    return { ...result, lease: { id } };
  }

  release({ rules, lease }: ReleaseArgs): null {
    const slots = lease === undefined ? rules.filter((rule) => rule.periodSeconds === 0) : this.takeSlots(lease, rules);
    void this.store.release(slots);
    return null;
  }

  /** Undoes an admission: the request counts and, through the lease, its slots. */
  refund({ rules, lease, nowMs }: ReleaseArgs): null {
    const windowed = rules.filter((rule) => rule.periodSeconds > 0);
    const slots = lease === undefined ? rules.filter((rule) => rule.periodSeconds === 0) : this.takeSlots(lease, rules);
    void this.store.refund([...windowed, ...slots], nowMs ?? Date.now());
    return null;
  }

  /** Gives back every slot a dead worker still held. */
  workerGone(workerId: number): number {
    let freed = 0;
    for (const [id, lease] of this.leases) {
      if (lease.workerId !== workerId) continue;
      this.leases.delete(id);
      freed += lease.slots.size;
      void this.store.release([...lease.slots.values()]);
    }
    return freed;
  }

  /** The slots of `rules` that `lease` still holds, taken out of it (each is given back once). */
  private takeSlots(leaseId: string, rules: readonly RateLimitRule[]): RateLimitRule[] {
    const lease = this.leases.get(leaseId);
    if (lease === undefined) return [];
    const taken: RateLimitRule[] = [];
    for (const rule of rules) {
      const held = lease.slots.get(rule.counterKey);
      if (held === undefined) continue;
      lease.slots.delete(rule.counterKey);
      taken.push(held);
    }
    if (lease.slots.size === 0) this.leases.delete(leaseId);
    return taken;
  }
}
