import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { budgetIdentity } from './budget-rules.ts';
import type { SharedBudgetStore } from './budget-service.ts';
import { periodWindow } from './periods.ts';
import type { SharedHold } from './reservation.ts';
import type { SpendLedger } from './spend-ledger.ts';

// Per rule and period window, two keys: `spent` (USD charged by every replica, never below
// what the asking replica knows from the database) and `held` (a sorted set of reservations,
// `<id>|<usd>` scored by the time the hold lapses, so a replica that dies mid-request frees
// its holds within `holdTtlMs`). KEYS: spent, held per ledger. ARGV: now, lapse, member, cost,
// then amount, floor, ttl seconds per ledger. Returns {0} (held) or {index, spent} (refused).
const admitScript = `
local now, lapse, member, cost = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])
local count = #KEYS / 2
for i = 1, count do
  local spent_key, held_key, floor = KEYS[2 * i - 1], KEYS[2 * i], tonumber(ARGV[3 + 3 * i])
  local spent = tonumber(redis.call('GET', spent_key) or '0')
  if spent < floor then
    spent = floor
    redis.call('SET', spent_key, tostring(floor), 'EX', ARGV[4 + 3 * i])
  end
  redis.call('ZREMRANGEBYSCORE', held_key, '-inf', now)
  local held = 0
  for _, entry in ipairs(redis.call('ZRANGE', held_key, 0, -1)) do
    held = held + (tonumber(string.match(entry, '|(.+)$')) or 0)
  end
  if spent + held >= tonumber(ARGV[2 + 3 * i]) then return {i, tostring(spent)} end
end
if cost > 0 then
  for i = 1, count do
    redis.call('ZADD', KEYS[2 * i], lapse, member)
    redis.call('EXPIRE', KEYS[2 * i], ARGV[4 + 3 * i])
  end
end
return {0}
`;

const noHold: SharedHold = { move: () => undefined, release: () => undefined };

export interface RedisBudgetStoreOptions {
  client: Redis;
  /** Key prefix, e.g. `model-gateway:budget:`. */
  prefix: string;
  logger: Logger;
  /** How long a reservation outlives a replica that never released it. */
  holdTtlMs?: number;
  /** The longest a request waits for Redis before the process decides alone. */
  timeoutMs?: number;
}

/**
 * Budget spend and reservations shared by replicas in Redis: the check and the hold of an
 * admission are one script, so replicas cannot all pass the same remaining amount at once.
 * When Redis does not answer, admission falls back to the process's own ledgers (fail open,
 * like rate limits), with a warning at most every 30 s.
 */
export class RedisBudgetStore implements SharedBudgetStore {
  private readonly options: RedisBudgetStoreOptions;
  private readonly holdTtlMs: number;
  private readonly timeoutMs: number;
  private warnedAt = 0;

  constructor(options: RedisBudgetStoreOptions) {
    this.options = options;
    this.holdTtlMs = options.holdTtlMs ?? 600_000;
    this.timeoutMs = options.timeoutMs ?? 500;
  }

  async admit(
    ledgers: readonly SpendLedger[],
    cost: number,
    now: number,
  ): Promise<{ hold: SharedHold } | { blockedBy: number; spent: number } | null> {
    const keys: string[] = [];
    const member = `${randomUUID()}|${cost}`;
    const args = [String(now), String(now + this.holdTtlMs), member, String(cost)];
    for (const ledger of ledgers) {
      keys.push(...this.keysOf(ledger, now));
      args.push(String(ledger.rule.amount), String(ledger.spent(now)), String(this.ttlSeconds(ledger, now)));
    }
    let reply: unknown;
    try {
      reply = await this.withinDeadline(this.options.client.eval(admitScript, keys.length, ...keys, ...args));
    } catch (error) {
      this.warn(error);
      return null;
    }
    const [index, spent] = reply as [number, string?];
    if (index !== 0) return { blockedBy: index - 1, spent: Number(spent) };
    if (cost <= 0) return { hold: noHold };
    return {
      hold: this.holdOf(
        keys.filter((_, position) => position % 2 === 1),
        member,
      ),
    };
  }

  charge(ledgers: readonly SpendLedger[], cost: number, now: number): void {
    const pipeline = this.options.client.pipeline();
    for (const ledger of ledgers) {
      const [spentKey] = this.keysOf(ledger, now);
      pipeline.incrbyfloat(spentKey as string, cost).expire(spentKey as string, this.ttlSeconds(ledger, now));
    }
    pipeline.exec().catch((error: unknown) => this.warn(error));
  }

  close(): void {
    this.options.client.disconnect();
  }

  private holdOf(heldKeys: string[], first: string): SharedHold {
    const id = first.slice(0, first.indexOf('|'));
    let member = first;
    const send = (build: (pipeline: ReturnType<Redis['pipeline']>) => void): void => {
      const pipeline = this.options.client.pipeline();
      build(pipeline);
      pipeline.exec().catch((error: unknown) => this.warn(error));
    };
    return {
      move: (cost) => {
        const previous = member;
        member = `${id}|${cost}`;
        const lapse = Date.now() + this.holdTtlMs;
        send((pipeline) => {
          for (const key of heldKeys) pipeline.zrem(key, previous).zadd(key, lapse, member);
        });
      },
      release: () =>
        send((pipeline) => {
          for (const key of heldKeys) pipeline.zrem(key, member);
        }),
    };
  }

  private keysOf(ledger: SpendLedger, now: number): [string, string] {
    const base = `${this.options.prefix}${budgetIdentity(ledger.rule.userPath, ledger.rule.periodSeconds)}:${periodWindow(ledger.rule.periodSeconds, now).start}`;
    return [`${base}:spent`, `${base}:held`];
  }

  /** Keys live until their period ends, plus a day. */
  private ttlSeconds(ledger: SpendLedger, now: number): number {
    return Math.ceil((periodWindow(ledger.rule.periodSeconds, now).end - now) / 1000) + 86_400;
  }

  private withinDeadline<T>(command: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    return Promise.race([command, deadline]).finally(() => clearTimeout(timer));
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.warnedAt < 30_000) return;
    this.warnedAt = now;
    this.options.logger.warn(
      { reason: error instanceof Error ? error.message : String(error) },
      'budgets: Redis unreachable, budgets checked by this replica alone',
    );
  }
}
