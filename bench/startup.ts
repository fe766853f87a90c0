import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { request } from 'undici';

import { freePort, PROJECT_ROOT, stopChild, trackChild } from './processes.ts';

// Start-up benchmark: starts `node <entry>` N times (default entry dist/main.js) with one
// provider configured that nothing listens for, and reports the median time from spawn to the
// first 200 on /health and the RSS a moment after start. With two entries (`--entry a --entry b`)
// the rounds alternate, so both are measured in the same run (A/B).
// Usage: tsx bench/startup.ts [--runs 15] [--entry dist/main.js] [--entry other.js]

interface Sample {
  startMs: number;
  rssMb: number;
}

const settleMs = 1000;

function parseArgs(argv: string[]): { runs: number; entries: string[] } {
  let runs = 15;
  const entries: string[] = [];
  for (let index = 0; index < argv.length; index += 2) {
    if (argv[index] === '--runs') runs = Number(argv[index + 1]);
    else if (argv[index] === '--entry') entries.push(argv[index + 1] ?? '');
    else throw new Error(`unknown argument ${String(argv[index])}`);
  }
  return { runs, entries: entries.length > 0 ? entries : ['dist/main.js'] };
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match === null ? Number.NaN : Math.round(Number(match[1]) / 102.4) / 10;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await request(url);
    await response.body.dump();
    return response.statusCode === 200;
  } catch {
    return false;
  }
}

async function startOnce(entry: string): Promise<Sample> {
  const port = await freePort();
  const deadPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-startup-'));
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: `http://127.0.0.1:${deadPort}/v1`,
  };
  const started = process.hrtime.bigint();
  const child = trackChild(
    spawn(process.execPath, [join(PROJECT_ROOT, entry)], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] }),
    entry,
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    const url = `http://127.0.0.1:${port}/health`;
    while (!(await healthy(url))) {
      if (child.exitCode !== null) throw new Error(`${entry} exited with ${String(child.exitCode)}: ${stderr}`);
      if (process.hrtime.bigint() - started > 30_000_000_000n) throw new Error(`${entry}: no /health 200 in 30 s`);
      await sleep(2);
    }
    const startMs = Number(process.hrtime.bigint() - started) / 1e6;
    await sleep(settleMs);
    return { startMs, rssMb: rssMb(child.pid ?? 0) };
  } finally {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function main(): Promise<void> {
  const { runs, entries } = parseArgs(process.argv.slice(2));
  const samples = new Map<string, Sample[]>(entries.map((entry) => [entry, []]));
  await startOnce(entries[0] ?? 'dist/main.js'); // warm the file cache, not counted
  for (let round = 0; round < runs; round += 1) {
    for (const entry of entries) samples.get(entry)?.push(await startOnce(entry));
  }
  const results = entries.map((entry) => {
    const list = samples.get(entry) ?? [];
    return {
      entry,
      runs: list.length,
      start_to_health_ms_median: Math.round(median(list.map((sample) => sample.startMs))),
      start_to_health_ms_min: Math.round(Math.min(...list.map((sample) => sample.startMs))),
      rss_after_start_mb_median: median(list.map((sample) => sample.rssMb)),
    };
  });
  for (const result of results) {
    process.stdout.write(
      `${result.entry}: start to first /health 200 median ${result.start_to_health_ms_median} ms (min ${result.start_to_health_ms_min}), RSS ${settleMs} ms after ${result.rss_after_start_mb_median} MB (${result.runs} runs)\n`,
    );
  }
  mkdirSync(join(PROJECT_ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(PROJECT_ROOT, 'bench', 'results', 'startup.json'),
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, results }, null, 2)}\n`,
  );
}

await main();
