import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type {
  AdmissionOptions,
  AdmissionResult,
  Breach,
  HeldSlots,
  RateLimitCounterStore,
  RuleCounts,
  SlotLease,
} from './counter-store.ts';
import { counterScripts, type CounterScript } from './redis-scripts.ts';
import { breachOf, countsOf, longestBreach, type RuleState } from './rule-check.ts';
import type { RateLimitRule } from './rules.ts';

/**
 * Default key prefix. The `{...}` hash tag puts every counter in one Redis Cluster slot, so a
 * script may touch all the rules of a request (multi-key scripts must stay in one slot). Keep a
 * hash tag in a custom prefix if you point the store at a Cluster.
 */
export const defaultRateLimitPrefix = 'gateway:ratelimit:{counters}:';
export const defaultLeaseTtlMs = 30_000;
/** How long a counter script may take before the store counts as unreachable. */
export const defaultCommandTimeoutMs = 200;

/** Keys per script call when renewing: bounds how long one renewal holds Redis. */
const renewBatch = 500;

export interface RedisCounterStoreOptions {
  /** The store uses the client and quits it on `close`. */
  readonly client: Redis;
  readonly prefix?: string;
  /** How long a concurrency slot outlives its last renewal (a dead replica's slots come back after it). */
  readonly leaseTtlMs?: number;
  /** How long a script or ping may take before it fails (default 200 ms). */
  readonly commandTimeoutMs?: number;
}

/**
 * Rate-limit counters in Redis, shared by every replica that uses the same Redis and prefix
 * (CONTRACT 6, `RATE_LIMITS_STORE=redis`). Same semantics as the memory store: each method is
 * one atomic Lua script (redis-scripts.ts), so `admit` checks every rule and commits on all of
 * them in one round trip.
 *
 * Time comes from the caller (`nowMs`, the gateway's clock), not from Redis TIME: the store then
 * has exactly the memory store's arithmetic and can be tested with a fake clock. Replicas are
 * assumed NTP-synchronised; a skew of d seconds moves a replica's window boundaries by d, and a
 * lagging clock never rolls a window back (sliding-window.ts `advance`).
 *
 * Concurrency slots are leases: a sorted set per rule of lease ids scored by expiry. `admit`
 * prunes expired leases before counting; the rate limiter renews the leases of live requests
 * every third of the TTL, so a replica that dies without releasing gives its slots back after
 * at most the TTL.
 */
export class RedisCounterStore implements RateLimitCounterStore {
  readonly client: Redis;
  readonly prefix: string;
  readonly leaseTtlMs: number;
  private readonly commandTimeoutMs: number;
  /** Lease ids: unique to this process, short, and cheap to make. */
  private readonly leasePrefix = randomBytes(6).toString('base64url');
  private leaseSequence = 0;

  constructor(options: RedisCounterStoreOptions) {
    this.client = options.client;
    this.prefix = options.prefix ?? defaultRateLimitPrefix;
    this.leaseTtlMs = options.leaseTtlMs ?? defaultLeaseTtlMs;
    this.commandTimeoutMs = options.commandTimeoutMs ?? defaultCommandTimeoutMs;
    // Scripts are loaded first thing on every connection: an EVALSHA answered NOSCRIPT is sent
    // again as EVAL after later commands, which could reorder a release and the next admission.
    this.client.on('ready', () => this.loadScripts());
    if (this.client.status === 'ready') this.loadScripts();
  }

  async admit(rules: readonly RateLimitRule[], options: AdmissionOptions, nowMs: number): Promise<AdmissionResult> {
    const at = Math.floor(nowMs);
    const lease = options.holdSlot && rules.some((rule) => rule.periodSeconds === 0) ? this.newLease() : undefined;
    const args = [at, flag(options.holdSlot), flag(options.enforceTokens), lease?.id ?? '', this.leaseTtlMs];
    for (const rule of rules) args.push(rule.periodSeconds, rule.maxRequests ?? -1, rule.maxTokens ?? -1);
    let reply: number[];
    try {
      reply = await this.run(counterScripts.admit, rules.map(this.keyOf), args);
    } catch (error) {
      // The script may have run (a reply that came too late): take the lease back, best effort.
      if (lease !== undefined) void this.release(rules, lease).catch(() => undefined);
      throw error;
    }
    const states = statesOf(reply, 1, rules.length);
    if (reply[0] !== 1) return { admitted: false, breach: longestBreach(rules, states, options, at) ?? unexplained(rules, at) };
    const now = Math.floor(at / 1000);
    const counts = rules.map((rule, index) => countsOf(rule, states[index] as RuleState, now));
    return lease === undefined ? { admitted: true, counts } : { admitted: true, counts, lease };
  }

  async release(rules: readonly RateLimitRule[], lease?: SlotLease): Promise<void> {
    const slots = rules.filter((rule) => rule.periodSeconds === 0);
    if (slots.length > 0) await this.run(counterScripts.release, slots.map(this.keyOf), [lease?.id ?? '']);
  }

  async refund(rules: readonly RateLimitRule[], nowMs: number, lease?: SlotLease): Promise<void> {
    if (rules.length === 0) return;
    const args: Array<string | number> = [Math.floor(nowMs), lease?.id ?? ''];
    for (const rule of rules) args.push(rule.periodSeconds, flag(rule.maxRequests !== null));
    await this.run(counterScripts.refund, rules.map(this.keyOf), args);
  }

  async addTokens(rules: readonly RateLimitRule[], tokens: number, nowMs: number): Promise<void> {
    const windowed = rules.filter((rule) => rule.periodSeconds > 0);
    if (windowed.length === 0) return;
    const args = [Math.floor(nowMs), tokens, ...windowed.map((rule) => rule.periodSeconds)];
    await this.run(counterScripts.addTokens, windowed.map(this.keyOf), args);
  }

  async hasCapacity(rules: readonly RateLimitRule[], enforceTokens: boolean, nowMs: number): Promise<boolean> {
    const states = await this.read(rules, nowMs);
    const now = Math.floor(nowMs / 1000);
    const options = { holdSlot: true, enforceTokens };
    return rules.every((rule, index) => breachOf(rule, states[index] as RuleState, options, now, nowMs) === null);
  }

  async counts(rules: readonly RateLimitRule[], nowMs: number): Promise<RuleCounts[]> {
    const states = await this.read(rules, nowMs);
    const now = Math.floor(nowMs / 1000);
    return rules.map((rule, index) => countsOf(rule, states[index] as RuleState, now));
  }

  async renewLeases(held: readonly HeldSlots[], nowMs: number): Promise<void> {
    const keys: string[] = [];
    const ids: string[] = [];
    for (const { rules, lease } of held) {
      for (const rule of rules) {
        if (rule.periodSeconds !== 0) continue;
        keys.push(this.keyOf(rule));
        ids.push(lease.id);
      }
    }
    const expiry = Math.floor(nowMs) + this.leaseTtlMs;
    for (let start = 0; start < keys.length; start += renewBatch) {
      const end = start + renewBatch;
      await this.run(counterScripts.renew, keys.slice(start, end), [expiry, this.leaseTtlMs, ...ids.slice(start, end)]);
    }
  }

  async reset(rule: RateLimitRule): Promise<void> {
    if (rule.periodSeconds > 0) await this.client.unlink(this.keyOf(rule));
  }

  /** Clears every request and token window under the prefix (slots stay, as in the memory store). */
  async resetAll(): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = await this.client.scan(cursor, 'MATCH', `${escapeGlob(this.prefix)}w:*`, 'COUNT', 1000);
      if (keys.length > 0) await this.client.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  }

  async forget(rule: RateLimitRule): Promise<void> {
    await this.client.unlink(this.keyOf(rule));
  }

  async ping(): Promise<boolean> {
    return (await this.withinDeadline(this.client.ping())) === 'PONG';
  }

  /** Calls `listener` each time the connection is (re)established. */
  onAvailable(listener: () => void): void {
    this.client.on('ready', listener);
  }

  /** Quits the connection (or drops it when Redis is unreachable). */
  async close(): Promise<void> {
    if (this.client.status !== 'ready') {
      this.client.disconnect();
      return;
    }
    await this.client.quit().catch(() => this.client.disconnect());
  }

  /** `<prefix>w:<counterKey>` for a window hash, `<prefix>s:<counterKey>` for a slot set. */
  readonly keyOf = (rule: RateLimitRule): string => `${this.prefix}${rule.periodSeconds === 0 ? 's' : 'w'}:${rule.counterKey}`;

  private withinDeadline<T>(pending: Promise<T>): Promise<T> {
    return deadline(pending, this.commandTimeoutMs);
  }

  private loadScripts(): void {
    for (const script of Object.values(counterScripts)) void this.client.script('LOAD', script.source).catch(() => undefined);
  }

  private newLease(): SlotLease {
    this.leaseSequence += 1;
    return { id: `${this.leasePrefix}.${this.leaseSequence.toString(36)}` };
  }

  private async read(rules: readonly RateLimitRule[], nowMs: number): Promise<RuleState[]> {
    if (rules.length === 0) return [];
    const args = [Math.floor(nowMs), ...rules.map((rule) => rule.periodSeconds)];
    return statesOf(await this.run(counterScripts.read, rules.map(this.keyOf), args), 0, rules.length);
  }

  /** EVALSHA, and EVAL once when Redis does not know the script (first use, or after a restart). */
  private async run(script: CounterScript, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<number[]> {
    let reply: unknown;
    try {
      reply = await this.withinDeadline(this.client.evalsha(script.sha, keys.length, ...keys, ...args));
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      reply = await this.withinDeadline(this.client.eval(script.source, keys.length, ...keys, ...args));
    }
    if (typeof reply === 'number') return [reply];
    if (!Array.isArray(reply) || !reply.every((item) => typeof item === 'number')) {
      throw new Error(`unexpected reply from the ${script.name} rate-limit script`);
    }
    return reply as number[];
  }
}

const flag = (value: boolean): number => (value ? 1 : 0);

/**
 * Rejects when `pending` has not settled `timeoutMs` after the call. The deadline is checked
 * from a setImmediate after the timer, that is after the event loop has read the sockets: a
 * reply that arrived while the loop was busy (a CPU-bound burst) still wins, so a busy replica
 * does not take itself for cut off from Redis.
 */
function deadline<T>(pending: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => setImmediate(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`))), timeoutMs);
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** The 7-integer states of `count` rules starting at `offset` in a script's reply. */
function statesOf(reply: readonly number[], offset: number, count: number): RuleState[] {
  const states: RuleState[] = [];
  for (let index = 0; index < count; index += 1) {
    const at = offset + index * 7;
    const value = (position: number): number => reply[at + position] ?? 0;
    states.push({
      requests: { start: value(0), current: value(1), previous: value(2) },
      tokens: { start: value(3), current: value(4), previous: value(5) },
      inFlight: value(6),
    });
  }
  return states;
}

/**
 * The script refused but the same counters show no breach here: cannot happen while the Lua and
 * TypeScript arithmetic agree. Refuse for one second rather than admit past a cap.
 */
function unexplained(rules: readonly RateLimitRule[], nowMs: number): Breach {
  const rule = rules[0] as RateLimitRule;
  return { rule, kind: rule.periodSeconds === 0 ? 'concurrent' : 'requests', retryAfterMs: 1000 - (nowMs % 1000) };
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (character) => `\\${character}`);
}

export interface RedisClientOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://...`. */
  readonly url: string;
  readonly connectTimeoutMs?: number;
}

/**
 * A client for the request path: commands fail at once while disconnected (no offline queue
 * piling up); it reconnects in the background. The store sets its own short deadline on each
 * command; the client's `commandTimeout` is only a backstop that keeps commands sent to a hung
 * server from queueing for ever. Resolves once the first connection attempt has settled,
 * whatever its outcome.
 */
export async function connectRedisForCounters(options: RedisClientOptions): Promise<Redis> {
  const connectTimeoutMs = options.connectTimeoutMs ?? 1_000;
  // ioredis is loaded only when a Redis store is configured, not at every start-up.
  const { Redis: RedisClient } = await import('../lazy/ioredis.ts');
  const client = new RedisClient(options.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: connectTimeoutMs,
    commandTimeout: 5_000,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1_000),
  });
  // The resilient store reports outages; without a listener ioredis would print each error.
  client.on('error', () => undefined);
  if (client.status !== 'ready') {
    await new Promise<void>((resolve) => {
      const settle = (): void => {
        clearTimeout(timer);
        client.off('ready', settle);
        client.off('error', settle);
        resolve();
      };
      const timer = setTimeout(settle, connectTimeoutMs);
      client.once('ready', settle);
      client.once('error', settle);
    });
  }
  return client;
}
