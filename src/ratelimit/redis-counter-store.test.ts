import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { AdmissionResult, RateLimitCounterStore, SlotLease } from './counter-store.ts';
import { MemoryCounterStore } from './memory-counter-store.ts';
import { RedisCounterStore } from './redis-counter-store.ts';
import type { RateLimitRule } from './rules.ts';
import { testServices } from '../../test/support/services.ts';
import { TEST_REDIS_URL, disposeRedisStores, freshRedisPrefix, freshRedisStore } from './testing/counter-stores.ts';

// The Redis counter store against the real Redis at 127.0.0.1:6379, each test under a key
// prefix of its own. rate-limiter.test.ts runs the limiter's behaviour on it; this file checks
// what only a shared store has: several replicas on one prefix, leases, expiry, and that the
// Lua arithmetic decides exactly as the memory store does.

const t0 = 1_000_000_200; // window-aligned, seconds
const ms = (seconds: number): number => seconds * 1000;

function rule(id: string, periodSeconds: number, maxRequests: number | null, maxTokens: number | null = null): RateLimitRule {
  return {
    id,
    counterKey: `${id}#config`,
    scope: 'user_path',
    subject: `/${id}`,
    periodSeconds,
    maxRequests,
    maxTokens,
    origin: 'config',
    createdAt: 0,
    updatedAt: 0,
  };
}

const hold = { holdSlot: true, enforceTokens: true };
const clients: Redis[] = [];

/** `count` stores on one prefix, each with a connection of its own: replicas of one gateway. */
function replicas(count: number, leaseTtlMs?: number): RedisCounterStore[] {
  const prefix = freshRedisPrefix();
  return Array.from({ length: count }, () => {
    const client = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    clients.push(client);
    return new RedisCounterStore({ client, prefix, leaseTtlMs });
  });
}

const leaseOf = (result: AdmissionResult): SlotLease | undefined => (result.admitted ? result.lease : undefined);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.quit()));
  await disposeRedisStores();
});

describe.skipIf(!testServices.redis)('RedisCounterStore', () => {
  it('admits exactly the cap across replicas under a parallel burst', async () => {
    const stores = replicas(3);
    const day = rule('burst', 86400, 25);
    const results = await Promise.all(
      Array.from({ length: 90 }, (_, index) => (stores[index % 3] as RedisCounterStore).admit([day], hold, ms(t0) + index)),
    );
    expect(results.filter((result) => result.admitted)).toHaveLength(25);
    const used = results.flatMap((result) => (result.admitted ? [result.counts[0]?.requestsUsed] : [])).sort((a, b) => (a ?? 0) - (b ?? 0));
    expect(used).toEqual(Array.from({ length: 25 }, (_, index) => index + 1));
    const [counts] = await (stores[1] as RedisCounterStore).counts([day], ms(t0 + 5));
    expect(counts?.requestsUsed).toBe(25);
  });

  it('holds a concurrency cap across replicas; a release frees only its own lease, once', async () => {
    const [first, second] = replicas(2) as [RedisCounterStore, RedisCounterStore];
    const slots = rule('slots', 0, 2);
    const a = await first.admit([slots], hold, ms(t0));
    const b = await second.admit([slots], hold, ms(t0));
    expect([a.admitted, b.admitted]).toEqual([true, true]);
    expect((await first.admit([slots], hold, ms(t0))).admitted).toBe(false);
    await second.release([slots], leaseOf(b));
    await second.release([slots], leaseOf(b));
    expect((await first.counts([slots], ms(t0)))[0]?.inFlight).toBe(1);
    const c = await first.admit([slots], hold, ms(t0));
    expect(c.admitted).toBe(true);
    expect((await second.admit([slots], hold, ms(t0))).admitted).toBe(false);
    // A batch submission (no slot) is never refused by a concurrency cap.
    expect((await second.admit([slots], { holdSlot: false, enforceTokens: true }, ms(t0))).admitted).toBe(true);
  });

  it('gives a dead replica’s slots back after the lease TTL, and renewals keep live ones', async () => {
    const [store] = replicas(1, 3_000) as [RedisCounterStore];
    const slots = rule('lease', 0, 1);
    const held = await store.admit([slots], hold, ms(t0));
    expect((await store.admit([slots], hold, ms(t0) + 2_999)).admitted).toBe(false);
    const lease = leaseOf(held);
    if (lease === undefined) throw new Error('no lease');
    await store.renewLeases([{ rules: [slots], lease }], ms(t0) + 2_000);
    expect((await store.admit([slots], hold, ms(t0) + 4_999)).admitted).toBe(false);
    expect((await store.counts([slots], ms(t0) + 4_999))[0]?.inFlight).toBe(1);
    // Never renewed again (the replica died): the slot is free once the lease has expired.
    expect((await store.counts([slots], ms(t0) + 5_000))[0]?.inFlight).toBe(0);
    expect((await store.admit([slots], hold, ms(t0) + 5_001)).admitted).toBe(true);
  });

  it('puts an expiry on every key it writes', async () => {
    const [store] = replicas(1, 3_000) as [RedisCounterStore];
    const minute = rule('expiry', 60, 10, 100);
    const slots = rule('expiry-slots', 0, 1);
    await store.admit([minute, slots], hold, Date.now());
    await store.addTokens([minute], 5, Date.now());
    const windowTtl = await store.client.pttl(store.keyOf(minute));
    const slotTtl = await store.client.pttl(store.keyOf(slots));
    expect(windowTtl).toBeGreaterThan(100_000);
    expect(windowTtl).toBeLessThanOrEqual(180_000);
    expect(slotTtl).toBeGreaterThan(5_000);
    expect(slotTtl).toBeLessThanOrEqual(6_000);
  });

  it('resets windows but not slots; forgets a deleted rule; resetAll stays within its prefix', async () => {
    const [store] = replicas(1) as [RedisCounterStore];
    const other = freshRedisStore();
    const minute = rule('reset', 60, 1);
    const slots = rule('reset-slots', 0, 1);
    await store.admit([minute, slots], hold, ms(t0));
    await other.admit([minute], hold, ms(t0));
    await store.reset(slots);
    await store.resetAll();
    const [window, inFlight] = await store.counts([minute, slots], ms(t0));
    expect([window?.requestsUsed, inFlight?.inFlight]).toEqual([0, 1]);
    expect((await other.counts([minute], ms(t0)))[0]?.requestsUsed).toBe(1);
    await store.forget(slots);
    expect((await store.counts([slots], ms(t0)))[0]?.inFlight).toBe(0);
  });

  it('never rolls a window back for a replica whose clock lags', async () => {
    const [ahead, behind] = replicas(2) as [RedisCounterStore, RedisCounterStore];
    const minute = rule('skew', 60, 100);
    for (let index = 0; index < 5; index += 1) await ahead.admit([minute], hold, ms(t0 + 60));
    const late = await behind.admit([minute], hold, ms(t0 + 59));
    expect(late.admitted && late.counts[0]?.requestsUsed).toBe(6);
  });

  it('decides exactly as the memory store over a random sequence of operations', async () => {
    const memory = new MemoryCounterStore();
    // Leases outlive the run: expiry is what the memory store does not have.
    const [redis] = replicas(1, 1_000_000_000) as [RedisCounterStore];
    const rules = [rule('a', 10, 4, 30), rule('b', 7, null, 12), rule('c', 60, 9), rule('d', 0, 2), rule('e', 0, 3)];
    const random = seeded(20261121);
    const live: Array<{ rules: RateLimitRule[]; leases: [SlotLease | undefined, SlotLease | undefined] }> = [];
    let nowMs = ms(t0) + 123;
    const pick = (): RateLimitRule[] => rules.filter(() => random() < 0.6);
    const refused = { requests: 0, tokens: 0, concurrent: 0 };
    for (let step = 0; step < 600; step += 1) {
      nowMs += Math.floor(random() * 1_200);
      const roll = random();
      const both = async <T>(action: (store: RateLimitCounterStore) => Promise<T>): Promise<T> => {
        const [fromMemory, fromRedis] = [await action(memory), await action(redis)];
        expect(fromRedis, `step ${step}`).toEqual(fromMemory);
        return fromMemory;
      };
      if (roll < 0.5) {
        const chosen = pick();
        const options = { holdSlot: random() < 0.8, enforceTokens: random() < 0.9 };
        const [fromMemory, fromRedis] = [await memory.admit(chosen, options, nowMs), await redis.admit(chosen, options, nowMs)];
        expect(withoutLease(fromRedis), `step ${step}`).toEqual(withoutLease(fromMemory));
        if (fromRedis.admitted && options.holdSlot) live.push({ rules: chosen, leases: [undefined, leaseOf(fromRedis)] });
        if (!fromRedis.admitted) refused[fromRedis.breach.kind] += 1;
      } else if (roll < 0.7 && live.length > 0) {
        const [ended] = live.splice(Math.floor(random() * live.length), 1);
        if (ended === undefined) continue;
        const slots = ended.rules.filter((one) => one.periodSeconds === 0);
        if (random() < 0.5) {
          await memory.release(slots);
          await redis.release(slots, ended.leases[1]);
        } else {
          await memory.refund(ended.rules, nowMs);
          await redis.refund(ended.rules, nowMs, ended.leases[1]);
        }
      } else if (roll < 0.8) {
        const chosen = pick();
        const tokens = Math.floor(random() * 15);
        await memory.addTokens(chosen, tokens, nowMs);
        await redis.addTokens(chosen, tokens, nowMs);
      } else if (roll < 0.9) {
        const chosen = pick();
        await both((store) => store.hasCapacity(chosen, true, nowMs));
      } else {
        await both((store) => store.counts(rules, nowMs));
      }
    }
    // The sequence reaches every kind of cap, so Retry-After was compared for each.
    expect(Math.min(refused.requests, refused.tokens, refused.concurrent), JSON.stringify(refused)).toBeGreaterThanOrEqual(5);
  });
});

function withoutLease(result: AdmissionResult): unknown {
  if (!result.admitted) return { ...result, breach: { ...result.breach, rule: result.breach.rule.id } };
  return { admitted: true, counts: result.counts };
}

/** A small deterministic PRNG (mulberry32), so a failure can be replayed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}
