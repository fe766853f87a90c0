import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { measureLoad, round, startGateway, startMock } from './harness.ts';
import { PROJECT_ROOT as ROOT, clockTicksPerSecond, median, pin, runBench } from './processes.ts';

// `npx tsx bench/paired-latency.ts`: added latency at c=1 (issue 18: gateway p50 minus direct
// p50), several builds or settings in one run. One mock; every side is started once; each round
// runs the load generator at c=1 non-streaming against direct (load -> mock) and every side in
// turn, the order rotated each round, so drift of the shared machine hits all alike. A side's
// added p50 is the median over rounds of (its p50 - direct's p50 of the same round); a pair of
// sides is compared by the median of their per-round differences, with how many rounds went
// each way. BENCH_SIDES: JSON {name: env} (`__ENTRY` names another build or a floor such as
// bench/relay-floor.mjs), default floor, dist-old/main.js ("before") and dist/main.js
// ("after"). BENCH_ROUNDS (8), BENCH_DURATION (3), BENCH_WARMUP (1). BENCH_PIN=true pins the
// sides to CPU 0 and the mock and the load generator to CPU 1 (default: nothing pinned).

const DEFAULT_SIDES = '{"floor":{"__ENTRY":"bench/relay-floor.mjs"},"before":{"__ENTRY":"dist-old/main.js"},"after":{}}';

interface Side {
  name: string;
  pid: number | undefined;
  baseUrl: string;
  p50Ms: number[];
  p99Ms: number[];
  cpuUsPerRequest: number[];
}

async function startSides(sides: Record<string, Record<string, string>>, mockUrl: string, pinned: boolean): Promise<Side[]> {
  const started: Side[] = [];
  for (const [name, variant] of Object.entries(sides)) {
    const { __ENTRY: entry, ...env } = variant;
    const workDirectory = await mkdtemp(join(tmpdir(), 'gateway-latency-'));
    const gateway = await startGateway(resolve(ROOT, entry ?? 'dist/main.js'), env, mockUrl, workDirectory);
    const pid = gateway.child.pid;
    if (pinned && pid !== undefined) pin(pid, 0);
    started.push({ name, pid, baseUrl: gateway.baseUrl, p50Ms: [], p99Ms: [], cpuUsPerRequest: [] });
  }
  return started;
}

interface Settings {
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  pinned: boolean;
}

function readSettings(): Settings {
  return {
    rounds: Number(process.env.BENCH_ROUNDS ?? 8),
    durationSeconds: Number(process.env.BENCH_DURATION ?? 3),
    warmupSeconds: Number(process.env.BENCH_WARMUP ?? 1),
    pinned: process.env.BENCH_PIN === 'true',
  };
}

async function main(): Promise<void> {
  const settings = readSettings();
  const sidesEnv = JSON.parse(process.env.BENCH_SIDES ?? DEFAULT_SIDES) as Record<string, Record<string, string>>;
  process.stderr.setMaxListeners(0); // every side's output is piped to it
  if (settings.pinned) pin(process.pid, 1); // the mock and the load generators inherit CPU 1
  const mock = await startMock();
  const direct: Side = { name: 'direct', pid: undefined, baseUrl: '', p50Ms: [], p99Ms: [], cpuUsPerRequest: [] };
  const sides = await startSides(sidesEnv, mock.url, settings.pinned);
  const all = [direct, ...sides];
  const ticksPerSecond = clockTicksPerSecond();
  const base = { stream: false, concurrency: 1, durationSeconds: settings.durationSeconds, warmupSeconds: settings.warmupSeconds };
  for (let index = 0; index <= settings.rounds; index += 1) {
    const order = all.map((_, at) => all[(at + index) % all.length] as Side);
    for (const side of order) {
      const spec = { ...base, target: side === direct ? ('direct' as const) : ('gateway' as const) };
      const processes = { mockUrl: mock.url, mockPid: mock.child.pid, gatewayUrl: side.baseUrl, gatewayPid: side.pid, ticksPerSecond };
      const load = await measureLoad(spec, processes);
      if (load.errors > 0) throw new Error(`${side.name} answered with errors: ${load.first_error ?? ''}`);
      if (index === 0) continue; // warm-up round: JIT, pools, the writer thread
      side.p50Ms.push(load.p50_ms);
      side.p99Ms.push(load.p99_ms);
      side.cpuUsPerRequest.push(load.gateway_cpu_us_per_request ?? load.mock_cpu_us_per_request);
    }
    if (index > 0) process.stderr.write(`bench: latency round ${index}/${settings.rounds}\n`);
  }
  await report(direct, sides, settings, sidesEnv);
}

function differences(left: Side, right: Side): number[] {
  return left.p50Ms.map((value, index) => round(value - (right.p50Ms[index] ?? value), 3));
}

function compare(first: Side, other: Side, out: (line: string) => boolean): object {
  const delta = differences(other, first);
  const lower = delta.filter((value) => value < 0).length;
  const difference = round(median(delta), 3);
  out(`${other.name} - ${first.name}: p50 ${difference} ms (median of per-round differences; lower in ${lower}/${delta.length} rounds)`);
  return { a: first.name, b: other.name, p50_difference_ms: difference, rounds_lower: lower, per_round: delta };
}

async function report(direct: Side, sides: Side[], settings: Settings, sidesEnv: Record<string, Record<string, string>>): Promise<void> {
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  out(`\nc=1 non-stream, ${settings.rounds} rounds of ${settings.durationSeconds} s, ${settings.pinned ? 'pinned' : 'unpinned'}`);
  out(
    `${'side'.padEnd(12)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'+p50 ms'.padStart(8)}  ${'µs/req'.padStart(7)}  per-round +p50`,
  );
  const rows = [direct, ...sides].map((side) => {
    const added = side === direct ? [] : differences(side, direct);
    const cells = [
      side.name.padEnd(12),
      String(round(median(side.p50Ms), 3)).padStart(7),
      String(round(median(side.p99Ms), 3)).padStart(7),
      (side === direct ? '' : String(round(median(added), 3))).padStart(8),
      String(round(median(side.cpuUsPerRequest), 1)).padStart(7),
    ];
    out(`${cells.join(' ')}  ${added.join(' ')}`);
    return {
      name: side.name,
      p50_ms: side.p50Ms,
      p99_ms: side.p99Ms,
      cpu_us_per_request: side.cpuUsPerRequest,
      added_p50_ms: round(median(added), 3),
    };
  });
  const comparisons = [];
  for (const [at, first] of sides.entries()) {
    for (const other of sides.slice(at + 1)) comparisons.push(compare(first, other, out));
  }
  const directory = join(ROOT, 'bench', 'results');
  await mkdir(directory, { recursive: true });
  const document = { date: new Date().toISOString(), node: process.version, ...settings, sides: sidesEnv, rows, comparisons };
  await writeFile(join(directory, 'paired-latency.json'), `${JSON.stringify(document, null, 2)}\n`);
}

await runBench(main);
