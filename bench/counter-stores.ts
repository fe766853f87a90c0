import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';

import { measureLoad, round, startGateway, type MeasuredLoad } from './harness.ts';
import { clockTicksPerSecond, stopChild } from './processes.ts';

// The rate-limit counter stores compared (issue 8): the same user-path rule on `/` (requests
// per minute, so every request is counted) in the gateway's memory and in Redis. Non-streaming,
// c=1 (no queueing: the difference is the Redis round trip of the admission), in interleaved
// rounds so that drift of the shared machine hits both alike. BENCH_COUNTER_RULE replaces the
// rule (e.g. `rpm=100000000,concurrent=1000` adds a slot taken and given back, a second round
// trip after the response). BENCH_REDIS_URL (default redis://127.0.0.1:6379); skipped when it
// does not answer.

const RULE = process.env.BENCH_COUNTER_RULE ?? 'rpm=100000000';
const ROUNDS = 3;

export interface CounterStoreComparison {
  redis_url: string;
  rule: string;
  rounds: number;
  memory: { p50_ms: number; p99_ms: number; rps: number; gateway_cpu_us_per_request: number };
  redis: { p50_ms: number; p99_ms: number; rps: number; gateway_cpu_us_per_request: number };
  p50_difference_ms: number;
  errors: number;
}

export interface ComparisonSettings {
  durationSeconds: number;
  warmupSeconds: number;
  gatewayEntry: string;
}

/** Runs the comparison against the mock at `mockUrl`; null (with a note) when Redis is not there. */
export async function compareCounterStores(
  settings: ComparisonSettings,
  mock: { url: string; pid: number | undefined },
): Promise<CounterStoreComparison | null> {
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (!(await redisAnswers(redisUrl))) {
    process.stderr.write(`bench: counter stores skipped, no Redis at ${redisUrl}\n`);
    return null;
  }
  const prefix = `bench:ratelimit:${randomBytes(4).toString('hex')}:{rl}:`;
  const variants = {
    memory: { SET_RATE_LIMIT_: RULE },
    redis: { SET_RATE_LIMIT_: RULE, RATE_LIMITS_STORE: 'redis', REDIS_URL: redisUrl, RATE_LIMITS_REDIS_PREFIX: prefix },
  };
  const loads: Record<keyof typeof variants, MeasuredLoad[]> = { memory: [], redis: [] };
  try {
    for (let index = 0; index < ROUNDS; index += 1) {
      for (const name of ['memory', 'redis'] as const) {
        process.stderr.write(`bench: counter store ${name}, round ${index + 1}/${ROUNDS}\n`);
        loads[name].push(await measureVariant(settings, variants[name], mock));
      }
    }
  } finally {
    await removeKeys(redisUrl, prefix);
  }
  const summary = (runs: MeasuredLoad[]) => ({
    p50_ms: round(median(runs.map((run) => run.p50_ms)), 3),
    p99_ms: round(median(runs.map((run) => run.p99_ms)), 3),
    rps: round(median(runs.map((run) => run.rps)), 1),
    gateway_cpu_us_per_request: round(median(runs.map((run) => run.gateway_cpu_us_per_request ?? 0)), 1),
  });
  const memory = summary(loads.memory);
  const redis = summary(loads.redis);
  const errors = [...loads.memory, ...loads.redis].reduce((total, run) => total + run.errors, 0);
  return {
    redis_url: redisUrl,
    rule: RULE,
    rounds: ROUNDS,
    memory,
    redis,
    p50_difference_ms: round(redis.p50_ms - memory.p50_ms, 3),
    errors,
  };
}

async function measureVariant(
  settings: ComparisonSettings,
  env: Record<string, string>,
  mock: { url: string; pid: number | undefined },
): Promise<MeasuredLoad> {
  const workDirectory = await mkdtemp(join(tmpdir(), 'gateway-bench-store-'));
  const gateway = await startGateway(settings.gatewayEntry, env, mock.url, workDirectory);
  try {
    const processes = {
      mockUrl: mock.url,
      mockPid: mock.pid,
      gatewayUrl: gateway.baseUrl,
      gatewayPid: gateway.child.pid,
      ticksPerSecond: clockTicksPerSecond(),
    };
    const spec = { target: 'gateway' as const, stream: false, concurrency: 1 };
    return await measureLoad({ ...spec, durationSeconds: settings.durationSeconds, warmupSeconds: settings.warmupSeconds }, processes);
  } finally {
    await stopChild(gateway.child);
    await rm(workDirectory, { recursive: true, force: true });
  }
}

export function printCounterStores(comparison: CounterStoreComparison): string[] {
  const row = (name: string, values: CounterStoreComparison['memory']): string =>
    `${name.padEnd(28)}${String(values.rps).padStart(9)}${String(values.p50_ms).padStart(9)}${String(values.p99_ms).padStart(9)}${String(values.gateway_cpu_us_per_request).padStart(11)}`;
  return [
    '',
    `rate-limit counter stores, non-stream c=1, rule "${comparison.rule}" on /, median of ${comparison.rounds} rounds`,
    `${'store'.padEnd(28)}${'rps'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'gw µs/req'.padStart(11)}`,
    row('memory', comparison.memory),
    row('redis', comparison.redis),
    `redis p50 - memory p50: ${comparison.p50_difference_ms} ms`,
  ];
}

async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1_000, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

async function removeKeys(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 0 });
  client.on('error', () => undefined);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`, 'COUNT', 1000);
      if (keys.length > 0) await client.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}
