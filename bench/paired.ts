import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { measureLoad, round, startGateway, startMock } from './harness.ts';
import { PROJECT_ROOT as ROOT, clockTicksPerSecond, mainThreadCpuMicros, median, memoryMegabytes, pin, runBench } from './processes.ts';

// `npx tsx bench/paired.ts`: two gateway builds or settings compared at the same time. Both
// gateways run pinned to CPU 0; the mock and two load generators (one per gateway, c=50
// non-streaming each) run on CPU 1, and both loads run together in every round, so whatever
// the shared machine does hits both alike. Per round, the main (event-loop) thread's CPU per
// request of each gateway is read from /proc; the result is the median over rounds of B/A.
// BENCH_PAIR: JSON {name: env} with two entries (`__ENTRY` names another build), default
// {"before":{"__ENTRY":"dist-old/main.js"},"after":{}}. BENCH_ROUNDS (6), BENCH_DURATION (3).
// BENCH_STREAM=true compares streams instead: c=10 (BENCH_CONCURRENCY), 20 chunks per stream
// (role, 18 words, finish, as ../shared/perf/mock.mjs) plus the usage chunk, each frame
// written by the mock in its own event-loop turn so that the gateway gets separate reads; the
// figure is then main-thread CPU per stream.

interface Side {
  name: string;
  pid: number;
  baseUrl: string;
  cpuUsPerRequest: number[];
  /** The whole process (every thread: event loop, SQLite writer, GC helpers), as bench/run.ts reads it. */
  processCpuUsPerRequest: number[];
  rps: number[];
  /** Peak RSS (VmHWM) after the last round: both gateways ran the same load, so compare them. */
  peakMb?: number;
}

async function startSides(pair: Record<string, Record<string, string>>, mockUrl: string): Promise<Side[]> {
  const sides: Side[] = [];
  for (const [name, variant] of Object.entries(pair)) {
    const { __ENTRY: entry, ...env } = variant;
    const workDirectory = await mkdtemp(join(tmpdir(), 'gateway-paired-'));
    const gateway = await startGateway(resolve(ROOT, entry ?? 'dist/main.js'), env, mockUrl, workDirectory);
    const pid = gateway.child.pid;
    if (pid === undefined) throw new Error(`gateway ${name} has no pid`);
    pin(pid, 0);
    sides.push({ name, pid, baseUrl: gateway.baseUrl, cpuUsPerRequest: [], processCpuUsPerRequest: [], rps: [] });
  }
  return sides;
}

async function main(): Promise<void> {
  if (cpus().length < 2) throw new Error('paired runs need two CPUs');
  const pair = JSON.parse(process.env.BENCH_PAIR ?? '{"before":{"__ENTRY":"dist-old/main.js"},"after":{}}') as Record<
    string,
    Record<string, string>
  >;
  if (Object.keys(pair).length !== 2) throw new Error('BENCH_PAIR must name exactly two variants');
  const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
  const durationSeconds = Number(process.env.BENCH_DURATION ?? 3);
  const stream = process.env.BENCH_STREAM === 'true';
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? (stream ? 10 : 50));
  // Everything this script starts inherits CPU 1; the gateways are moved to CPU 0.
  pin(process.pid, 1);
  // BENCH_CHUNKS (18) content chunks per stream: two runs with different counts split a stream's
  // cost into its set-up and its per-chunk part.
  const chunks = process.env.BENCH_CHUNKS ?? '18';
  const mock = await startMock(stream ? { MOCK_CHUNKS: chunks, MOCK_CHUNK_EACH_TURN: '1' } : {});
  const sides = await startSides(pair, mock.url);
  const ticksPerSecond = clockTicksPerSecond();
  const spec = { target: 'gateway' as const, stream, concurrency, durationSeconds, warmupSeconds: 1 };
  for (let index = 0; index <= rounds; index += 1) {
    const before = sides.map((side) => mainThreadCpuMicros(side.pid, ticksPerSecond));
    const loads = await Promise.all(
      sides.map((side) =>
        measureLoad(spec, { mockUrl: mock.url, mockPid: mock.child.pid, gatewayUrl: side.baseUrl, gatewayPid: side.pid, ticksPerSecond }),
      ),
    );
    if (index === 0) continue; // warm-up round: JIT, pools, the writer thread
    process.stderr.write(`bench: paired round ${index}/${rounds}\n`);
    sides.forEach((side, at) => {
      const load = loads[at];
      if (load === undefined || load.errors > 0) throw new Error(`gateway ${side.name} answered with errors: ${load?.first_error ?? ''}`);
      const micros = mainThreadCpuMicros(side.pid, ticksPerSecond) - (before[at] ?? 0);
      side.cpuUsPerRequest.push(round(micros / Math.max(1, load.total_requests), 1));
      side.processCpuUsPerRequest.push(load.gateway_cpu_us_per_request ?? 0);
      side.rps.push(load.rps);
    });
  }
  await report(sides, { rounds, durationSeconds, stream, concurrency }, pair);
}

interface Run {
  rounds: number;
  durationSeconds: number;
  stream: boolean;
  concurrency: number;
}

async function report(sides: Side[], run: Run, pair: Record<string, Record<string, string>>): Promise<void> {
  const [first, second] = sides as [Side, Side];
  for (const side of sides) side.peakMb = memoryMegabytes(side.pid).hwm_mb;
  const ratios = second.cpuUsPerRequest.map((value, index) => value / (first.cpuUsPerRequest[index] ?? value));
  const ratio = round(median(ratios), 3);
  const rpsRatio = round(median(second.rps.map((value, index) => value / (first.rps[index] ?? value))), 3);
  const unit = run.stream ? 'stream' : 'req';
  const kind = run.stream ? 'stream (20 chunks + usage)' : 'non-stream';
  process.stdout.write(
    `\nmain-thread CPU per ${unit === 'req' ? 'request' : 'stream'}, ${kind} c=${run.concurrency}, both loaded together (${run.rounds} rounds)\n`,
  );
  for (const side of sides) {
    process.stdout.write(
      `${side.name.padEnd(16)} median ${String(round(median(side.cpuUsPerRequest), 1)).padStart(7)} µs/${unit}   ${String(round(median(side.rps), 0)).padStart(6)} ${unit}/s   rounds ${side.cpuUsPerRequest.join(' ')}\n`,
    );
  }
  const processRatios = second.processCpuUsPerRequest.map((value, index) => value / (first.processCpuUsPerRequest[index] ?? value));
  const processRatio = round(median(processRatios), 3);
  for (const side of sides) {
    const perRound = side.processCpuUsPerRequest.join(' ');
    process.stdout.write(
      `${side.name.padEnd(16)} all threads ${String(round(median(side.processCpuUsPerRequest), 1)).padStart(7)} µs/${unit}   rounds ${perRound}\n`,
    );
  }
  process.stdout.write(`peak RSS (VmHWM) ${sides.map((side) => `${side.name} ${String(side.peakMb)} MB`).join(', ')}\n`);
  process.stdout.write(
    `${second.name} / ${first.name}: CPU ${ratio}, all-threads CPU ${processRatio}, rate ${rpsRatio} (medians of per-round ratios)\n`,
  );
  const directory = join(ROOT, 'bench', 'results');
  await mkdir(directory, { recursive: true });
  const document = {
    date: new Date().toISOString(),
    node: process.version,
    ...run,
    pair,
    sides,
    ratio,
    process_ratio: processRatio,
    rps_ratio: rpsRatio,
  };
  await writeFile(join(directory, run.stream ? 'paired-stream.json' : 'paired.json'), `${JSON.stringify(document, null, 2)}\n`);
}

await runBench(main);
