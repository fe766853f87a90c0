import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { request } from 'undici';

import { freePort, PROJECT_ROOT, stopChild, trackChild } from './processes.ts';

// One start of a gateway build, timed from spawn to the first 200 on /health, as
// bench/startup.ts and bench/run.ts measure it: `node <entry>` in a fresh temporary directory
// (new SQLite file, no config.yaml, LOG_LEVEL=warn) with one OpenAI provider whose upstream
// refuses connections. The floor is a bare `node:http` server answering /health, started the
// same way: what Node itself costs on this machine at this moment.

export interface StartSample {
  startMs: number;
  rssMb: number;
}

export const FLOOR_ENTRY = 'floor';
const floorScript =
  "require('node:http').createServer((q, s) => { s.setHeader('content-type', 'application/json'); s.end('{\"status\":\"ok\"}'); })" +
  ".listen(Number(process.env.PORT), '127.0.0.1')";

export function rssMb(pid: number): number {
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

/** Starts `entry` (relative to the project, or FLOOR_ENTRY) once; RSS is read `settleMs` after the first 200. */
export async function startOnce(entry: string, settleMs: number): Promise<StartSample> {
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
  const args = entry === FLOOR_ENTRY ? ['-e', floorScript] : [resolve(PROJECT_ROOT, entry)];
  const started = process.hrtime.bigint();
  const child = trackChild(spawn(process.execPath, args, { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] }), entry);
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
    if (settleMs > 0) await sleep(settleMs);
    return { startMs, rssMb: rssMb(child.pid ?? 0) };
  } finally {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

export interface StartSummary {
  entry: string;
  runs: number;
  first_start_ms: number;
  start_to_health_ms_median: number;
  start_to_health_ms_min: number;
  rss_after_start_mb_median: number;
}

/**
 * Starts every entry `runs` times, rounds alternating (A/B in one run), after one uncounted
 * start of each (its time is kept as `first_start_ms`: the coldest file cache of the run).
 */
export async function measureStarts(entries: string[], runs: number, settleMs: number): Promise<StartSummary[]> {
  const samples = new Map<string, StartSample[]>(entries.map((entry) => [entry, []]));
  const first = new Map<string, number>();
  for (const entry of entries) first.set(entry, (await startOnce(entry, 0)).startMs);
  for (let round = 0; round < runs; round += 1) {
    for (const entry of entries) samples.get(entry)?.push(await startOnce(entry, settleMs));
  }
  return entries.map((entry) => {
    const list = samples.get(entry) ?? [];
    return {
      entry,
      runs: list.length,
      first_start_ms: Math.round(first.get(entry) ?? 0),
      start_to_health_ms_median: Math.round(median(list.map((sample) => sample.startMs))),
      start_to_health_ms_min: Math.round(Math.min(...list.map((sample) => sample.startMs))),
      rss_after_start_mb_median: median(list.map((sample) => sample.rssMb)),
    };
  });
}
