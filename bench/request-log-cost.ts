import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { round } from './harness.ts';
import { PROJECT_ROOT as ROOT } from './processes.ts';

// `npm run bench:request-log-cost`: what the request log and the tracing code cost the event
// loop, as paired A/B runs of bench/paired.ts (both gateways loaded together, main-thread CPU
// per request, median of per-round ratios), BENCH_REPEATS times (3) each:
// - `log-on / log-off`: the default gateway against REQUEST_LOG_ENABLED=false (issue 16: <= 1.05);
// - `traced-code / no-tracing-code` (only when BENCH_NO_TRACING_ENTRY names a build with the
//   tracing hooks removed, e.g. dist-old/notrace/main.js; see bench/README.md): tracing off
//   against the same gateway without tracing code (issue 16: within 1%).
// Results: bench/results/request-log-cost.json (each run's ratio and per-round ratios).

interface PairedSide {
  name: string;
  cpuUsPerRequest: number[];
  rps: number[];
}

interface PairRun {
  ratio: number;
  roundRatios: number[];
  medians: Record<string, number>;
}

const repeats = Number(process.env.BENCH_REPEATS ?? 3);

async function pairedRun(pair: Record<string, Record<string, string>>): Promise<PairRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'paired.ts')], {
    cwd: ROOT,
    env: { ...process.env, BENCH_PAIR: JSON.stringify(pair) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`bench/paired.ts failed (exit ${String(code)})`);
  const document = JSON.parse(await readFile(join(ROOT, 'bench', 'results', 'paired.json'), 'utf8')) as {
    ratio: number;
    sides: PairedSide[];
  };
  const [first, second] = document.sides as [PairedSide, PairedSide];
  const roundRatios = second.cpuUsPerRequest.map((value, index) => round(value / (first.cpuUsPerRequest[index] ?? value), 3));
  const median = (values: number[]): number => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)] ?? 0;
  const medians = Object.fromEntries(document.sides.map((side) => [side.name, median(side.cpuUsPerRequest)]));
  return { ratio: document.ratio, roundRatios, medians };
}

async function series(label: string, pair: Record<string, Record<string, string>>): Promise<PairRun[]> {
  const runs: PairRun[] = [];
  for (let index = 0; index < repeats; index += 1) {
    process.stderr.write(`bench: ${label}, run ${index + 1}/${repeats}\n`);
    runs.push(await pairedRun(pair));
  }
  return runs;
}

function summary(label: string, runs: PairRun[]): string {
  const lines = runs.map(
    (run, index) =>
      `  run ${index + 1}: ${run.ratio}   rounds ${Math.min(...run.roundRatios)} to ${Math.max(...run.roundRatios)} (${run.roundRatios.join(' ')})`,
  );
  return `${label} (median of per-round ratios of main-thread CPU per request)\n${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const document: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, repeats };
  const log = await series('log-on / log-off', { 'log-off': { REQUEST_LOG_ENABLED: 'false' }, 'log-on': {} });
  document.request_log = { pair: 'log-on / log-off', budget: 1.05, runs: log };
  let text = summary('log-on / log-off (budget 1.05)', log);
  const noTracing = process.env.BENCH_NO_TRACING_ENTRY;
  if (noTracing !== undefined) {
    const tracing = await series('traced-code / no-tracing-code', { 'no-tracing-code': { __ENTRY: noTracing }, 'traced-code': {} });
    document.tracing_off = { pair: 'traced-code / no-tracing-code', entry: noTracing, budget: 1.01, runs: tracing };
    text += summary('tracing off: traced-code / no-tracing-code (budget 1.01)', tracing);
  }
  process.stdout.write(`\n${text}`);
  await writeFile(join(ROOT, 'bench', 'results', 'request-log-cost.json'), `${JSON.stringify(document, null, 2)}\n`);
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
