import type { Logger } from 'pino';
import type { RateLimitSettings } from './rate-limit-settings.ts';
import type { RateLimitCounterStore } from './counter-store.ts';
import { MemoryCounterStore } from './memory-counter-store.ts';
import { RateLimiter } from './rate-limiter.ts';
import { connectRedisForCounters, defaultRateLimitPrefix, RedisCounterStore } from './redis-counter-store.ts';
import { ResilientCounterStore } from './resilient-counter-store.ts';
import type { RateLimitRuleStore } from './rule-store.ts';

/** The rate limiter and, with `RATE_LIMITS_STORE=redis`, the shared counter store behind it. */
export interface RateLimiting {
  readonly limiter: RateLimiter;
  /** Null with the memory store: nothing to report in /health/ready or metrics. */
  readonly sharedCounters: ResilientCounterStore | null;
  /** Stops the timers, waits for counter updates in flight, then closes the Redis connection. */
  close(): Promise<void>;
}

export interface RateLimitingOptions {
  readonly settings: { readonly rateLimits: RateLimitSettings; readonly reloadIntervalMs: number };
  readonly ruleStore: RateLimitRuleStore;
  /** False when usage tracking is off: token caps are then not enforced. */
  readonly usageEnabled: boolean;
  readonly logger: Logger;
}

/** Builds and starts rate limiting from the settings; null when RATE_LIMITS_ENABLED is off. */
export async function startRateLimiting(options: RateLimitingOptions): Promise<RateLimiting | null> {
  const { settings, logger, usageEnabled } = options;
  const limits = settings.rateLimits;
  if (!limits.enabled) return null;
  const sharedCounters = limits.store === 'redis' && limits.redisUrl !== null ? await connectShared(limits, logger) : null;
  const counters: RateLimitCounterStore = sharedCounters ?? new MemoryCounterStore();
  const limiter = new RateLimiter({
    counters,
    ruleStore: options.ruleStore,
    configRules: limits.rules,
    enforceTokens: usageEnabled,
    logger,
    reloadIntervalMs: settings.reloadIntervalMs,
    // Renewed three times per TTL: two renewals can be lost before a live slot expires.
    leaseRenewalMs: Math.max(100, Math.floor(limits.leaseTtlMs / 3)),
  });
  await limiter.start();
  if (!usageEnabled && limiter.hasTokenRules()) {
    logger.warn(
      'token rate limits are configured but USAGE_ENABLED is off: max_tokens limits are not enforced (request and concurrency limits are)',
    );
  }
  logger.info(
    { rules: limiter.ruleCount, store: limits.store, ...(sharedCounters ? { fail_mode: limits.failMode } : {}) },
    'rate limits ready',
  );
  return {
    limiter,
    sharedCounters,
    async close() {
      limiter.stop();
      await limiter.idle();
      await sharedCounters?.close();
    },
  };
}

async function connectShared(limits: RateLimitSettings, logger: Logger): Promise<ResilientCounterStore> {
  const client = await connectRedisForCounters({ url: limits.redisUrl ?? '' });
  const shared = new RedisCounterStore({ client, prefix: limits.redisPrefix ?? defaultRateLimitPrefix, leaseTtlMs: limits.leaseTtlMs });
  return new ResilientCounterStore({
    shared,
    store: 'redis',
    failMode: limits.failMode,
    logger,
    availableAtStart: client.status === 'ready',
  });
}
