import type { RuleDraft } from './rules.ts';

/** The rate limiting section of the settings (README "Rate limits"). */
export interface RateLimitSettings {
  readonly enabled: boolean;
  readonly rules: readonly RuleDraft[];
  /** Where counters live: this process (`memory`, the default) or Redis, shared by replicas. */
  readonly store: 'memory' | 'redis';
  /** Set when `store` is `redis`. */
  readonly redisUrl: string | null;
  /** Key prefix in Redis; null for the default. */
  readonly redisPrefix: string | null;
  /** While Redis does not answer: `open` counts locally, `closed` refuses limited requests (503). */
  readonly failMode: 'open' | 'closed';
  /** How long a concurrency slot held in Redis outlives its last renewal. */
  readonly leaseTtlMs: number;
}
