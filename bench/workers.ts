import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { request } from 'undici';

import { MASTER_KEY, measureLoad, round, startGateway, startMock, type LoadSpec } from './harness.ts';
import { PROJECT_ROOT as ROOT, clockTicksPerSecond, runBench } from './processes.ts';

// `npm run bench:workers` (docs/adr/0037-workers-are-replicas.md, bench/notes/workers.md). Three
// measures of WORKERS; the workers share counters through Redis (REDIS_URL, default
// redis://127.0.0.1:6379), as replicas do:
// 1. throughput, c=50 non-stream: WORKERS=1 pinned to CPU 0 against WORKERS=2 pinned to CPUs
//    0,1, in alternating rounds (A, B, A, B...: both see the same noise; they cannot run at
//    once without sharing the cores they are compared on). The load generator and the mock
//    run on the same two cores: unavoidable on a 2-core machine, so the 2-worker figure is a
//    lower bound of the scaling on a host with spare cores for them.
// 2. admission cost: WORKERS=2, c=1 p50 and CPU per request (all processes, and the primary
//    alone) with a rate-limit rule that matches every request (a day window and a concurrency
//    cap: an admission and a release in Redis per request) against no rule; alternating rounds.
//    Then the same two gateways at c=50: the CPU an admission costs when calls are batched.
// 3. exactness: WORKERS=2, a rule of N requests a day, 4N requests at c=64 on many
//    connections: exactly N admitted.
// BENCH_ROUNDS (3), BENCH_DURATION (2 s). BENCH_WORKERS_BASELINE=dist-old/main.js (an older
// build) runs only an A/B of measure 2: that build and this one, both WORKERS=2 with the rule,
// alternating, BENCH_ROUNDS rounds of BENCH_DURATION at c=BENCH_CONCURRENCY (1); results in
// bench/results/workers-ab.json (workers-ab-c<N>.json for another concurrency).

/** The store the workers share; a prefix of each gateway's own, so that no run counts another's requests. */
const sharedStore = (): Record<string, string> => ({
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  RATE_LIMITS_STORE: 'redis',
  RATE_LIMITS_REDIS_PREFIX: `bench-workers-${randomUUID()}:`,
});
const rule = (): Record<string, string> => ({ SET_PROVIDER_RATE_LIMIT_OPENAI: 'rpd=1000000000,concurrent=100000', ...sharedStore() });

interface Variant {
  name: string;
  env: Record<string, string>;
  cpus: string;
  pid: number;
  baseUrl: string;
  rps: number[];
  p50: number[];
  cpuUsPerRequest: number[];
  primaryCpuUsPerRequest: number[];
}

/** The gateway's processes: the primary and, with WORKERS > 1, its workers. */
function processTree(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return [pid, ...children];
}

function ticksOf(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    for (const task of execFileSync('ls', [`/proc/${pid}/task`], { encoding: 'utf8' })
      .trim()
      .split(/\s+/)) {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += Number(fields[11]) + Number(fields[12]);
    }
  }
  return total;
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function start(
  name: string,
  env: Record<string, string>,
  cpuList: string,
  mockUrl: string,
  entry = 'dist/main.js',
): Promise<Variant> {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-workers-'));
  // A loaded 2-core machine can take many seconds to start two workers.
  const gateway = await startGateway(resolve(ROOT, entry), env, mockUrl, directory, 90_000);
  const pid = gateway.child.pid ?? 0;
  await new Promise((done) => setTimeout(done, 3_000)); // every worker listening
  for (const member of processTree(pid)) execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(member)], { stdio: 'ignore' });
  return { name, env, cpus: cpuList, pid, baseUrl: gateway.baseUrl, rps: [], p50: [], cpuUsPerRequest: [], primaryCpuUsPerRequest: [] };
}

async function alternate(
  variants: Variant[],
  spec: LoadSpec,
  mock: { url: string; pid: number | undefined },
  rounds: number,
): Promise<void> {
  const ticksPerSecond = clockTicksPerSecond();
  for (let index = 0; index <= rounds; index += 1) {
    for (const variant of variants) {
      const tree = processTree(variant.pid);
      const before = ticksOf(tree);
      const primaryBefore = ticksOf([variant.pid]);
      const context = { mockUrl: mock.url, mockPid: mock.pid, gatewayUrl: variant.baseUrl, gatewayPid: variant.pid, ticksPerSecond };
      const load = await measureLoad(spec, context);
      if (index === 0) continue; // warm-up round
      if (load.errors > 0) throw new Error(`${variant.name} answered with errors: ${load.first_error ?? ''}`);
      const perRequest = (ticks: number): number => round((ticks * 1e6) / ticksPerSecond / Math.max(1, load.total_requests), 1);
      variant.rps.push(load.rps);
      variant.p50.push(load.p50_ms);
      variant.cpuUsPerRequest.push(perRequest(ticksOf(tree) - before));
      variant.primaryCpuUsPerRequest.push(perRequest(ticksOf([variant.pid]) - primaryBefore));
    }
    if (index > 0) process.stderr.write(`bench: round ${index}/${rounds}\n`);
  }
}

function summary(variant: Variant): Record<string, unknown> {
  return {
    name: variant.name,
    cpus: variant.cpus,
    env: variant.env,
    rps_median: round(median(variant.rps), 0),
    p50_ms_median: round(median(variant.p50), 3),
    cpu_us_per_request_median: round(median(variant.cpuUsPerRequest), 1),
    primary_cpu_us_per_request_median: round(median(variant.primaryCpuUsPerRequest), 1),
    rounds: { rps: variant.rps, p50_ms: variant.p50, cpu_us_per_request: variant.cpuUsPerRequest },
  };
}

/** WORKERS=2, a day cap of `cap`: 4 x cap requests at c=64, each on a new connection; how many pass. */
async function exactness(mockUrl: string, cap: number): Promise<{ cap: number; sent: number; admitted: number; refused: number }> {
  const env = { WORKERS: '2', SET_PROVIDER_RATE_LIMIT_OPENAI: `rpd=${cap}`, ...sharedStore() };
  const gateway = await start('exactness', env, '0,1', mockUrl);
  const body = JSON.stringify({ model: 'openai/mock-model', messages: [{ role: 'user', content: 'hi' }] });
  const statuses: number[] = [];
  let next = 0;
  const sendAll = async (): Promise<void> => {
    while (next < 4 * cap) {
      next += 1;
      // reset: a connection per request, so that the cluster spreads them over both workers.
      const response = await request(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
        body,
        reset: true,
      });
      await response.body.arrayBuffer();
      statuses.push(response.statusCode);
    }
  };
  await Promise.all(Array.from({ length: 64 }, sendAll));
  return {
    cap,
    sent: statuses.length,
    admitted: statuses.filter((code) => code === 200).length,
    refused: statuses.filter((code) => code === 429).length,
  };
}

async function main(): Promise<void> {
  if (cpus().length < 2) throw new Error('this benchmark needs two CPUs');
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const durationSeconds = Number(process.env.BENCH_DURATION ?? 2);
  const mock = await startMock();
  const mockSide = { url: mock.url, pid: mock.child.pid };
  const loadAtStart = loadavg();
  const baseline = process.env.BENCH_WORKERS_BASELINE;
  if (baseline !== undefined) return compareBuilds(baseline, mockSide, rounds, durationSeconds);
  const throughput = [
    await start('workers=1 cpu 0', {}, '0', mock.url),
    await start('workers=2 cpus 0,1', { WORKERS: '2' }, '0,1', mock.url),
  ];
  await alternate(throughput, { target: 'gateway', stream: false, concurrency: 50, durationSeconds, warmupSeconds: 1 }, mockSide, rounds);
  const admission = [
    await start('workers=2 no rule', { WORKERS: '2' }, '0,1', mock.url),
    await start('workers=2 rule', { WORKERS: '2', ...rule() }, '0,1', mock.url),
  ];
  await alternate(admission, { target: 'gateway', stream: false, concurrency: 1, durationSeconds: 2, warmupSeconds: 0.5 }, mockSide, 3);
  const busy = admission.map(fresh);
  await alternate(busy, { target: 'gateway', stream: false, concurrency: 50, durationSeconds, warmupSeconds: 1 }, mockSide, rounds);
  const exact = await exactness(mock.url, 100);
  await report(throughput, [admission, busy], exact, { rounds, durationSeconds }, loadAtStart);
}

/** A/B of the admission cost: an older build and this one, WORKERS=2 with the rule, c=BENCH_CONCURRENCY (1). */
async function compareBuilds(
  entry: string,
  mock: { url: string; pid: number | undefined },
  rounds: number,
  durationSeconds: number,
): Promise<void> {
  const env = { WORKERS: '2', ...rule() };
  const pair = [await start(`before (${entry})`, env, '0,1', mock.url, entry), await start('after', env, '0,1', mock.url)];
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 1);
  await alternate(pair, { target: 'gateway', stream: false, concurrency, durationSeconds, warmupSeconds: 0.5 }, mock, rounds);
  const ratios = (pick: (variant: Variant) => number[]): number[] => {
    const [before, after] = pair.map(pick) as [number[], number[]];
    return after.map((value, index) => round(value / (before[index] ?? 1), 3));
  };
  const document = {
    date: new Date().toISOString(),
    load_average: loadavg(),
    concurrency,
    variants: pair.map(summary),
    after_over_before: {
      p50: ratios((variant) => variant.p50),
      cpu_us_per_request: ratios((variant) => variant.cpuUsPerRequest),
      primary_cpu_us_per_request: ratios((variant) => variant.primaryCpuUsPerRequest),
    },
  };
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  await mkdir(join(ROOT, 'bench', 'results'), { recursive: true });
  const file = concurrency === 1 ? 'workers-ab.json' : `workers-ab-c${concurrency}.json`;
  await writeFile(join(ROOT, 'bench', 'results', file), `${JSON.stringify(document, null, 2)}\n`);
}

/** The same gateway, its figures measured anew. */
function fresh(variant: Variant): Variant {
  return { ...variant, rps: [], p50: [], cpuUsPerRequest: [], primaryCpuUsPerRequest: [] };
}

/** A rule against none: what the shared (Redis) admission adds. */
function admissionCost([free, limited]: Variant[]): Record<string, unknown> {
  const [w2Free, w2Rule] = [free, limited].map((variant) => (variant === undefined ? {} : summary(variant))) as Array<
    Record<string, number>
  >;
  return {
    variants: [w2Free, w2Rule],
    added_p50_ms: round((w2Rule?.['p50_ms_median'] ?? 0) - (w2Free?.['p50_ms_median'] ?? 0), 3),
    added_cpu_us_per_request: round((w2Rule?.['cpu_us_per_request_median'] ?? 0) - (w2Free?.['cpu_us_per_request_median'] ?? 0), 1),
    primary_cpu_us_per_request_with_rule: w2Rule?.['primary_cpu_us_per_request_median'],
  };
}

async function report(
  throughput: Variant[],
  [idle, busy]: Variant[][],
  exact: Record<string, number>,
  run: Record<string, number>,
  loadAtStart: number[],
): Promise<void> {
  const [one, two] = throughput.map(summary) as [Record<string, number>, Record<string, number>];
  const document = {
    date: new Date().toISOString(),
    node: process.version,
    load_average: { start: loadAtStart, end: loadavg() },
    note: 'alternating rounds; load generator and mock share the two cores with the gateway',
    run,
    throughput: { variants: [one, two], rps_ratio_2_over_1: round((two?.['rps_median'] ?? 0) / (one?.['rps_median'] ?? 1), 3) },
    admission: admissionCost(idle ?? []),
    admission_c50: admissionCost(busy ?? []),
    exactness: exact,
  };
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  const directory = join(ROOT, 'bench', 'results');
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, 'workers.json'), `${JSON.stringify(document, null, 2)}\n`);
}

await runBench(main);
