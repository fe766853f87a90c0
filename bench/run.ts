import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { HEALTH_P99_LIMIT_MS, measureAdversarial, printAdversarial } from './adversarial.ts';
import { compareCounterStores, printCounterStores, type CounterStoreComparison } from './counter-stores.ts';
import { goalRows, printGoalRows, type LoadRow, type Memory } from './goals.ts';
import { measureLoad, round, startGateway, startMock, type MeasuredLoad } from './harness.ts';
import { PROJECT_ROOT as ROOT, clockTicksPerSecond, killChildrenOnExit, memoryMegabytes, stopAllChildren, stopChild } from './processes.ts';
import { FLOOR_ENTRY, measureStarts, rssMb, type StartSummary } from './startup-probe.ts';

// `npm run bench`: mock upstream, gateway and load generator as separate processes; every
// scenario runs once direct (load -> mock) and once through the gateway. See bench/README.md.

interface Scenario {
  name: string;
  target: 'direct' | 'gateway';
  stream: boolean;
  concurrency: number;
}

type ScenarioResult = LoadRow;

interface Budget {
  name: string;
  value: number;
  limit: number;
  pass: boolean;
}

interface Settings {
  durationSeconds: number;
  warmupSeconds: number;
  gatewayEntry: string;
  gatewayEnv: Record<string, string>;
  startRuns: number;
}

function readSettings(): Settings {
  const seconds = (name: string, fallback: number): number => {
    const value = Number(process.env[name] ?? fallback);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0`);
    return value;
  };
  const rawEnv = process.env.BENCH_GATEWAY_ENV ?? '{}';
  const parsed: unknown = JSON.parse(rawEnv);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error('BENCH_GATEWAY_ENV must be a JSON object');
  }
  const gatewayEnv = Object.fromEntries(Object.entries(parsed).map(([key, value]) => [key, String(value)]));
  return {
    durationSeconds: seconds('BENCH_DURATION', 8),
    warmupSeconds: seconds('BENCH_WARMUP', 2),
    gatewayEntry: resolve(ROOT, process.env.BENCH_GATEWAY_ENTRY ?? 'dist/main.js'),
    gatewayEnv,
    startRuns: Math.max(1, Math.round(seconds('BENCH_START_RUNS', 15))),
  };
}

/** Issue 18's rows: non-stream at c=1 and c=50, streams of 20 chunks at c=10. */
const SCENARIOS: Scenario[] = (
  [
    [false, 1],
    [false, 50],
    [true, 10],
  ] as const
).flatMap(([stream, concurrency]) =>
  (['direct', 'gateway'] as const).map((target) => ({
    name: `${target} ${stream ? 'stream' : 'non-stream'} c=${concurrency}`,
    target,
    stream,
    concurrency,
  })),
);

/** role + 18 content chunks + finish = 20 chunks, then usage and [DONE], each in its own turn (as ../shared/perf). */
const MOCK_STREAM_ENV = { MOCK_CHUNKS: '18', MOCK_CHUNK_EACH_TURN: '1' };

interface Processes {
  mockUrl: string;
  mockPid: number | undefined;
  gatewayUrl: string;
  gatewayPid: number | undefined;
  ticksPerSecond: number;
}

async function runScenario(settings: Settings, scenario: Scenario, processes: Processes): Promise<ScenarioResult> {
  const load = await measureLoad(
    { ...scenario, durationSeconds: settings.durationSeconds, warmupSeconds: settings.warmupSeconds },
    processes,
  );
  return { ...scenario, ...load };
}

function addComparisons(results: ScenarioResult[]): void {
  for (const result of results) {
    if (result.target !== 'gateway') continue;
    const direct = results.find(
      (other) => other.target === 'direct' && other.stream === result.stream && other.concurrency === result.concurrency,
    );
    if (direct === undefined) continue;
    result.rps_vs_direct = direct.rps > 0 ? round(result.rps / direct.rps, 3) : 0;
    result.p50_overhead_ms = round(result.p50_ms - direct.p50_ms, 3);
  }
}

function checkBudgets(results: ScenarioResult[]): Budget[] {
  const find = (name: string): ScenarioResult | undefined => results.find((result) => result.name === name);
  const overhead = find('gateway non-stream c=1')?.p50_overhead_ms ?? Number.POSITIVE_INFINITY;
  const ratio = find('gateway non-stream c=50')?.rps_vs_direct ?? 0;
  return [
    {
      name: 'gateway adds at most 1 ms at p50 at c=1 (non-stream)',
      value: overhead,
      limit: 1,
      pass: overhead <= 1,
    },
    {
      name: 'gateway reaches at least 25% of direct rps at c=50 non-stream',
      value: ratio,
      limit: 0.25,
      pass: ratio >= 0.25,
    },
  ];
}

/** Issue 8: the Redis round trip adds at most 0.5 ms at p50 over the memory store. */
function counterStoreBudget(comparison: CounterStoreComparison): Budget {
  const value = comparison.p50_difference_ms;
  return {
    name: 'redis counter store adds at most 0.5 ms at p50 over memory (c=1, user-path rule)',
    value,
    limit: 0.5,
    pass: value <= 0.5,
  };
}

function errorShare(result: MeasuredLoad): number {
  return result.errors / Math.max(1, result.requests + result.errors);
}

function printReport(results: ScenarioResult[], budgets: Budget[], memory: Memory, goals: string[]): void {
  const header = ['scenario', 'rps', 'p50 ms', 'p99 ms', 'errors', 'vs direct', 'p50 +ms', 'gw µs/req', 'mock µs/req'];
  const show = (value: number | undefined): string => (value === undefined ? '' : String(value));
  const rows = results.map((result) => [
    result.name,
    show(result.rps),
    show(result.p50_ms),
    show(result.p99_ms),
    show(result.errors),
    show(result.rps_vs_direct),
    show(result.p50_overhead_ms),
    show(result.gateway_cpu_us_per_request),
    show(result.mock_cpu_us_per_request),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const format = (row: string[]): string =>
    row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ');
  const lines = [format(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(format), ''];
  lines.push(
    `gateway memory: RSS 1 s after start ${memory.rss_after_start_mb} MB, after the runs ${memory.rss_mb} MB, peak (VmHWM) ${memory.hwm_mb} MB`,
  );
  for (const budget of budgets) lines.push(`${budget.pass ? 'PASS' : 'FAIL'}  ${budget.name} (measured ${budget.value})`);
  for (const result of results.filter((item) => errorShare(item) > 0.01)) {
    lines.push(`ERRORS  ${result.name}: ${JSON.stringify(result.error_statuses)} ${result.first_error ?? ''}`);
  }
  process.stdout.write(`${[...lines, '', ...goals].join('\n')}\n`);
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

async function writeResults(settings: Settings, report: object): Promise<string> {
  const cpuList = cpus();
  const document = {
    date: new Date().toISOString(),
    git_commit: gitCommit(),
    machine: {
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpus: cpuList.length,
      cpu_model: cpuList[0]?.model ?? null,
      total_memory_mb: Math.round(totalmem() / 1048576),
      load_average_1m: round(loadavg()[0] ?? 0),
    },
    settings: {
      duration_s: settings.durationSeconds,
      warmup_s: settings.warmupSeconds,
      gateway_entry: settings.gatewayEntry,
    },
    env_overrides: settings.gatewayEnv,
    ...report,
  };
  const directory = join(ROOT, 'bench', 'results');
  await mkdir(directory, { recursive: true });
  const path = join(directory, process.env.BENCH_OUT ?? 'latest.json');
  await writeFile(path, `${JSON.stringify(document, null, 2)}\n`);
  return path;
}

/** Start-up first, while nothing else of the bench runs: the gateway alternating with the floor. */
async function measureStartup(settings: Settings): Promise<{ start: StartSummary | undefined; floor: StartSummary | undefined }> {
  process.stderr.write(`bench: start-up, ${settings.startRuns} starts of the gateway and of the floor, alternating\n`);
  const [floor, start] = await measureStarts([FLOOR_ENTRY, settings.gatewayEntry], settings.startRuns, 0);
  return { start, floor };
}

async function main(): Promise<number> {
  const settings = readSettings();
  const workDirectory = await mkdtemp(join(tmpdir(), 'gateway-bench-'));
  process.once('exit', () => rmSync(workDirectory, { recursive: true, force: true }));
  try {
    const startup = await measureStartup(settings);
    const mock = await startMock(MOCK_STREAM_ENV);
    const gateway = await startGateway(settings.gatewayEntry, settings.gatewayEnv, mock.url, workDirectory);
    await sleep(1000);
    const rssAfterStart = rssMb(gateway.child.pid ?? 0);
    const processes: Processes = {
      mockUrl: mock.url,
      mockPid: mock.child.pid,
      gatewayUrl: gateway.baseUrl,
      gatewayPid: gateway.child.pid,
      ticksPerSecond: clockTicksPerSecond(),
    };
    const results: ScenarioResult[] = [];
    for (const scenario of SCENARIOS) {
      process.stderr.write(`bench: ${scenario.name} (${settings.warmupSeconds}+${settings.durationSeconds} s)\n`);
      results.push(await runScenario(settings, scenario, processes));
    }
    addComparisons(results);
    const budgets = checkBudgets(results);
    const memory: Memory = { rss_after_start_mb: rssAfterStart, ...memoryMegabytes(gateway.child.pid) };
    const goals = goalRows(results, memory, startup.start);
    await stopChild(gateway.child);
    const counterStores = await compareCounterStores(settings, { url: mock.url, pid: mock.child.pid });
    if (counterStores !== null) budgets.push(counterStoreBudget(counterStores));
    printReport(results, budgets, memory, printGoalRows(goals, startup.start, startup.floor));
    if (counterStores !== null) process.stdout.write(`${printCounterStores(counterStores).join('\n')}\n`);
    const adversarial = await measureAdversarial(settings.gatewayEntry, mock.url, workDirectory);
    for (const row of adversarial) {
      const value = row.health_p99_ms;
      budgets.push({
        name: `/health p99 under ${HEALTH_P99_LIMIT_MS} ms during ${row.name}`,
        value,
        limit: HEALTH_P99_LIMIT_MS,
        pass: value < HEALTH_P99_LIMIT_MS,
      });
    }
    process.stdout.write(`${printAdversarial(adversarial).join('\n')}\n`);
    const path = await writeResults(settings, {
      scenarios: results,
      budgets,
      gateway_memory: memory,
      issue18_goals: goals,
      startup: startup,
      counter_stores: counterStores,
      adversarial,
    });
    process.stderr.write(`bench: wrote ${path}\n`);
    return results.some((result) => errorShare(result) > 0.01) ? 1 : 0;
  } finally {
    await stopAllChildren();
    await rm(workDirectory, { recursive: true, force: true });
  }
}

killChildrenOnExit();

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
