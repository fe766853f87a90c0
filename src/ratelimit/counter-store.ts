import type { RateLimitRule } from './rules.ts';

/** Live counters of one rule. */
export interface RuleCounts {
  /** Sliding estimate of requests (0 for concurrency rules). */
  requestsUsed: number;
  tokensUsed: number;
  inFlight: number;
  /** Current aligned window, epoch seconds; null for concurrency rules. */
  windowStart: number | null;
  windowEnd: number | null;
}

export interface Breach {
  rule: RateLimitRule;
  kind: 'requests' | 'tokens' | 'concurrent';
  /** Milliseconds from now until the first whole second at which a retry is admitted. */
  retryAfterMs: number;
}

/**
 * Names one admission's concurrency slots in a store that keeps slots one by one (leases that
 * expire unless renewed, so a dead replica's slots come back). Opaque to callers: hand it back
 * to `release`, `refund` and `renewLeases` unchanged. Stores that only count slots return none.
 */
export interface SlotLease {
  readonly id: string;
}

export type AdmissionResult = { admitted: true; counts: RuleCounts[]; lease?: SlotLease } | { admitted: false; breach: Breach };

/** The slots of one live admission: its concurrency rules and the lease that holds them. */
export interface HeldSlots {
  readonly rules: readonly RateLimitRule[];
  readonly lease: SlotLease;
}

export interface AdmissionOptions {
  /** Take a slot on concurrency rules (false for batch submissions). */
  holdSlot: boolean;
  /** Check token caps (false when usage tracking is off). */
  enforceTokens: boolean;
}

/**
 * Where counters live. Every method is atomic across the rules it is given: `admit` checks
 * every rule and, only if all pass, counts the request on each (and takes slots). The memory
 * store is one process's; a shared store (Redis) gives the same semantics to every replica.
 */
export interface RateLimitCounterStore {
  /** Check all, then commit all; on a breach nothing is counted. `counts` follow `rules`' order. */
  admit(rules: readonly RateLimitRule[], options: AdmissionOptions, nowMs: number): Promise<AdmissionResult>;
  /** Gives back one slot on each concurrency rule: the lease's own when `admit` returned one. */
  release(rules: readonly RateLimitRule[], lease?: SlotLease): Promise<void>;
  /** Undoes an admission that was not used (budget refusal): the request count and the slots. */
  refund(rules: readonly RateLimitRule[], nowMs: number, lease?: SlotLease): Promise<void>;
  /**
   * Extends the expiry of slots still held (stores whose slots are leases); the rate limiter
   * calls it periodically for every live admission. Optional: counting stores need no renewal.
   */
  renewLeases?(held: readonly HeldSlots[], nowMs: number): Promise<void>;
  /** Adds tokens of a completed response to each windowed rule. */
  addTokens(rules: readonly RateLimitRule[], tokens: number, nowMs: number): Promise<void>;
  /** Whether `admit` would pass right now; changes nothing. */
  hasCapacity(rules: readonly RateLimitRule[], enforceTokens: boolean, nowMs: number): Promise<boolean>;
  counts(rules: readonly RateLimitRule[], nowMs: number): Promise<RuleCounts[]>;
  /** Clears the request and token windows of a rule (slots in flight stay). */
  reset(rule: RateLimitRule): Promise<void>;
  resetAll(): Promise<void>;
  /** Drops everything kept for a deleted rule. */
  forget(rule: RateLimitRule): Promise<void>;
}
