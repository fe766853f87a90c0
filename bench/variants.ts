import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { measureLoad, round, startGateway, startMock, type MeasuredLoad } from './harness.ts';
import { PROJECT_ROOT as ROOT, clockTicksPerSecond, runBench, stopChild } from './processes.ts';

// `npm run bench:variants`: the same non-streaming load against gateways started with
// different settings, in interleaved rounds against one mock, so that the shared machine's
// drift hits every variant alike. Reports each variant's rps and CPU per request relative to
// the first one. BENCH_VARIANTS (JSON: name -> env) replaces the default set.

const twentyRules: Record<string, string> = Object.fromEntries(
  Array.from({ length: 19 }, (_unused, index) => [`SET_RATE_LIMIT_ELSEWHERE__P${index}`, 'rpm=1000000']),
);

const defaultVariants: Record<string, Record<string, string>> = {
  'no usage, no rules': { USAGE_ENABLED: 'false', RATE_LIMITS_ENABLED: 'false' },
  'usage on': { RATE_LIMITS_ENABLED: 'false' },
  'usage on, 20 rules (1 matching)': { ...twentyRules, SET_RATE_LIMIT_: 'rpm=100000000' },
};

interface VariantResult {
  name: string;
  rounds: MeasuredLoad[];
  rps: number;
  gateway_cpu_us_per_request: number;
}

async function main(): Promise<void> {
  const durationSeconds = Number(process.env.BENCH_DURATION ?? 6);
  const warmupSeconds = Number(process.env.BENCH_WARMUP ?? 2);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 50);
  const variants = process.env.BENCH_VARIANTS
    ? (JSON.parse(process.env.BENCH_VARIANTS) as Record<string, Record<string, string>>)
    : defaultVariants;
  const entry = resolve(ROOT, 'dist/main.js');
  const mock = await startMock();
  const results: VariantResult[] = Object.keys(variants).map((name) => ({ name, rounds: [], rps: 0, gateway_cpu_us_per_request: 0 }));
  for (let round_ = 0; round_ < rounds; round_ += 1) {
    for (const result of results) {
      const workDirectory = await mkdtemp(join(tmpdir(), 'gateway-variant-'));
      // A variant may name another build with the key __ENTRY (e.g. a copy of dist/ from before a change).
      const { __ENTRY: variantEntry, ...variantEnv } = variants[result.name] ?? {};
      const gateway = await startGateway(variantEntry ? resolve(ROOT, variantEntry) : entry, variantEnv, mock.url, workDirectory);
      process.stderr.write(`bench: round ${round_ + 1}/${rounds} ${result.name}\n`);
      const processes = {
        mockUrl: mock.url,
        mockPid: mock.child.pid,
        gatewayUrl: gateway.baseUrl,
        gatewayPid: gateway.child.pid,
        ticksPerSecond: clockTicksPerSecond(),
      };
      result.rounds.push(await measureLoad({ target: 'gateway', stream: false, concurrency, durationSeconds, warmupSeconds }, processes));
      await stopChild(gateway.child);
      await rm(workDirectory, { recursive: true, force: true });
    }
  }
  for (const result of results) {
    result.rps = round(median(result.rounds.map((load) => load.rps)), 1);
    result.gateway_cpu_us_per_request = round(median(result.rounds.map((load) => load.gateway_cpu_us_per_request ?? 0)), 1);
  }
  printTable(results, concurrency);
  const directory = join(ROOT, 'bench', 'results');
  await mkdir(directory, { recursive: true });
  const document = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    load_average_1m: round(loadavg()[0] ?? 0),
    concurrency,
    durationSeconds,
    rounds,
    variants,
    results,
  };
  await writeFile(join(directory, 'variants.json'), `${JSON.stringify(document, null, 2)}\n`);
  process.stderr.write('bench: wrote bench/results/variants.json\n');
}

function printTable(results: VariantResult[], concurrency: number): void {
  const base = results[0];
  process.stdout.write(`\nnon-stream c=${concurrency}, median of rounds\n`);
  process.stdout.write(
    `${'variant'.padEnd(34)}${'rps'.padStart(9)}${'vs first'.padStart(10)}${'gw µs/req'.padStart(11)}${'vs first'.padStart(10)}  rounds (rps)\n`,
  );
  for (const result of results) {
    const rpsRatio = base && base.rps > 0 ? round(result.rps / base.rps, 3) : 0;
    const cpuRatio =
      base && base.gateway_cpu_us_per_request > 0 ? round(result.gateway_cpu_us_per_request / base.gateway_cpu_us_per_request, 3) : 0;
    const rounds = result.rounds.map((load) => round(load.rps, 0)).join(' ');
    process.stdout.write(
      `${result.name.padEnd(34)}${String(result.rps).padStart(9)}${String(rpsRatio).padStart(10)}${String(result.gateway_cpu_us_per_request).padStart(11)}${String(cpuRatio).padStart(10)}  ${rounds}\n`,
    );
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

await runBench(main);
