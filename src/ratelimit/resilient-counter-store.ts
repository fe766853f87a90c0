import type { Logger } from 'pino';
import { GatewayError } from '../errors/gateway-error.ts';
import type { AdmissionOptions, AdmissionResult, HeldSlots, RateLimitCounterStore, RuleCounts, SlotLease } from './counter-store.ts';
import { MemoryCounterStore } from './memory-counter-store.ts';
import type { RateLimitRule } from './rules.ts';

/** What to do with limited requests while the shared store does not answer. */
export type RateLimitFailMode = 'open' | 'closed';

/** A shared store that can be probed (the Redis counter store). */
export interface SharedCounterStore extends RateLimitCounterStore {
  ping(): Promise<boolean>;
  close(): Promise<void>;
  /** Calls `listener` each time the store's connection is (re)established. */
  onAvailable?(listener: () => void): void;
}

export interface CounterStoreStatus {
  readonly store: string;
  /** Whether the shared store answers (decisions are shared across replicas). */
  readonly available: boolean;
  readonly failMode: RateLimitFailMode;
  /** Admissions decided by this process's local counters because the shared store was down. */
  readonly localAdmissions: number;
}

export interface ResilientCounterStoreOptions {
  readonly shared: SharedCounterStore;
  readonly store: string;
  readonly failMode: RateLimitFailMode;
  readonly logger: Logger;
  /** Whether the shared store answered at startup. */
  readonly availableAtStart: boolean;
  /** How often an unavailable shared store is probed (default 1 s). */
  readonly probeIntervalMs?: number;
}

/** Remembers which store an admission went to, so its slots and refund go back there. */
class RoutedLease implements SlotLease {
  readonly id: string;
  readonly local: boolean;
  readonly inner: SlotLease | undefined;

  constructor(local: boolean, inner: SlotLease | undefined) {
    this.id = inner?.id ?? '';
    this.local = local;
    this.inner = inner;
  }
}

/**
 * The shared counter store with a failure policy (the stance of Envoy, Kong and Stripe): when
 * Redis does not answer, `open` (default) keeps serving on this process's own counters, as if
 * the store were `memory`, and `closed` refuses limited requests with 503
 * `rate_limit_store_unavailable`. Each transition is logged once; an unavailable store is
 * probed every second, and decisions go back to it as soon as it answers. Nothing that happens
 * after admission (release, refund, token accounting, lease renewal) ever fails a request:
 * leases held in Redis expire by themselves.
 */
export class ResilientCounterStore implements RateLimitCounterStore {
  private readonly options: ResilientCounterStoreOptions;
  private readonly shared: SharedCounterStore;
  private readonly local = new MemoryCounterStore();
  private available: boolean;
  private localAdmissions = 0;
  private probe: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(options: ResilientCounterStoreOptions) {
    this.options = options;
    this.shared = options.shared;
    this.available = true;
    // A reconnection is tried at once rather than at the next probe.
    this.shared.onAvailable?.(() => void this.check());
    if (!options.availableAtStart) this.markDown(new Error('not reachable at startup'));
  }

  status(): CounterStoreStatus {
    return { store: this.options.store, available: this.available, failMode: this.options.failMode, localAdmissions: this.localAdmissions };
  }

  /** Asks the shared store now (for /health/ready), updating the state either way. */
  async check(): Promise<CounterStoreStatus> {
    await this.shared.ping().then(
      (answered) => (answered ? this.markUp() : this.markDown(new Error('no PONG'))),
      (error: unknown) => this.markDown(error),
    );
    return this.status();
  }

  async admit(rules: readonly RateLimitRule[], options: AdmissionOptions, nowMs: number): Promise<AdmissionResult> {
    if (this.available) {
      try {
        return routed(await this.shared.admit(rules, options, nowMs), false);
      } catch (error) {
        this.markDown(error);
      }
    }
    if (this.options.failMode === 'closed') throw storeUnavailable();
    this.localAdmissions += 1;
    return routed(this.local.admitNow(rules, options, nowMs), true);
  }

  async release(rules: readonly RateLimitRule[], lease?: SlotLease): Promise<void> {
    if (this.isLocal(lease)) return this.local.release(rules);
    await this.quietly(() => this.shared.release(rules, innerOf(lease)));
  }

  async refund(rules: readonly RateLimitRule[], nowMs: number, lease?: SlotLease): Promise<void> {
    if (this.isLocal(lease)) return this.local.refund(rules, nowMs);
    await this.quietly(() => this.shared.refund(rules, nowMs, innerOf(lease)));
  }

  async addTokens(rules: readonly RateLimitRule[], tokens: number, nowMs: number): Promise<void> {
    if (this.available && (await this.quietly(() => this.shared.addTokens(rules, tokens, nowMs)))) return;
    // Counted locally while degraded, so local enforcement sees them.
    if (this.options.failMode === 'open') await this.local.addTokens(rules, tokens, nowMs);
  }

  async renewLeases(held: readonly HeldSlots[], nowMs: number): Promise<void> {
    const renew = this.shared.renewLeases?.bind(this.shared);
    if (!this.available || renew === undefined) return;
    const shared: HeldSlots[] = [];
    for (const { rules, lease } of held) {
      const inner = innerOf(lease);
      if (!this.isLocal(lease) && inner !== undefined) shared.push({ rules, lease: inner });
    }
    if (shared.length > 0) await this.quietly(() => renew(shared, nowMs));
  }

  async hasCapacity(rules: readonly RateLimitRule[], enforceTokens: boolean, nowMs: number): Promise<boolean> {
    if (this.available) {
      try {
        return await this.shared.hasCapacity(rules, enforceTokens, nowMs);
      } catch (error) {
        this.markDown(error);
      }
    }
    // A probe only steers routing; when closed, the admission itself answers 503.
    return this.options.failMode === 'closed' || this.local.hasCapacity(rules, enforceTokens, nowMs);
  }

  async counts(rules: readonly RateLimitRule[], nowMs: number): Promise<RuleCounts[]> {
    if (this.available) {
      try {
        return await this.shared.counts(rules, nowMs);
      } catch (error) {
        this.markDown(error);
      }
    }
    if (this.options.failMode === 'closed') throw storeUnavailable();
    return this.local.counts(rules, nowMs);
  }

  async reset(rule: RateLimitRule): Promise<void> {
    await this.local.reset(rule);
    await this.required(() => this.shared.reset(rule));
  }

  async resetAll(): Promise<void> {
    await this.local.resetAll();
    await this.required(() => this.shared.resetAll());
  }

  async forget(rule: RateLimitRule): Promise<void> {
    await this.local.forget(rule);
    // The rule's keys expire by themselves and its counter key is never used again.
    await this.quietly(() => this.shared.forget(rule));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopProbe();
    await this.shared.close();
  }

  private isLocal(lease: SlotLease | undefined): boolean {
    return lease instanceof RoutedLease ? lease.local : !this.available;
  }

  /** Runs a shared-store update whose failure must not reach the request; true when it went through. */
  private async quietly(action: () => Promise<void>): Promise<boolean> {
    try {
      await action();
      return true;
    } catch (error) {
      this.markDown(error);
      return false;
    }
  }

  /** Runs an admin operation on the shared store; its failure is a 503. */
  private async required(action: () => Promise<void>): Promise<void> {
    try {
      await action();
    } catch (error) {
      this.markDown(error);
      throw storeUnavailable();
    }
  }

  private markDown(error: unknown): void {
    if (!this.available || this.closed) return;
    this.available = false;
    const policy = this.options.failMode === 'open' ? 'counting locally (fail-open)' : 'refusing limited requests (fail-closed)';
    this.options.logger.warn({ err: error, store: this.options.store }, `rate limits: shared counter store unreachable, ${policy}`);
    this.probe = setInterval(() => void this.check(), this.options.probeIntervalMs ?? 1_000);
    this.probe.unref();
  }

  private markUp(): void {
    if (this.available) return;
    this.available = true;
    this.stopProbe();
    this.options.logger.info({ store: this.options.store }, 'rate limits: shared counter store reachable again, counting there');
  }

  private stopProbe(): void {
    if (this.probe !== null) clearInterval(this.probe);
    this.probe = null;
  }
}

function routed(result: AdmissionResult, local: boolean): AdmissionResult {
  return result.admitted ? { ...result, lease: new RoutedLease(local, result.lease) } : result;
}

function innerOf(lease: SlotLease | undefined): SlotLease | undefined {
  return lease instanceof RoutedLease ? lease.inner : lease;
}

function storeUnavailable(): GatewayError {
  return new GatewayError('provider_error', 'rate limit check failed: the shared rate-limit counter store is unavailable', {
    status: 503,
    code: 'rate_limit_store_unavailable',
  });
}
