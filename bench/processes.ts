import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import { request } from 'undici';

// Child processes of the benchmark (spawned, watched, measured through /proc, and always
// stopped), so that bench/run.ts reads as the scenario list it is.

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
const children = new Set<ChildProcess>();

export function trackChild(child: ChildProcess, label: string): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  child.once('error', (error) => process.stderr.write(`bench: ${label}: ${error.message}\n`));
  return child;
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

export function spawnScript(script: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, script), ...args], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return trackChild(child, script);
}

/** Resolves the first stdout line starting with `prefix`; rejects on exit or timeout. */
export async function waitForLine(child: ChildProcess, prefix: string, timeoutMs: number): Promise<string> {
  if (child.stdout === null) throw new Error('child has no stdout');
  const lines = createInterface({ input: child.stdout });
  const timer = setTimeout(() => lines.close(), timeoutMs);
  try {
    for await (const line of lines) if (line.startsWith(prefix)) return line;
  } finally {
    clearTimeout(timer);
    lines.close();
  }
  throw new Error(`no "${prefix}" line (exit code ${String(child.exitCode)}, or timed out)`);
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

export async function waitHealthy(baseUrl: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`gateway exited (${String(child.exitCode ?? child.signalCode)}) before /health`);
    }
    try {
      const response = await request(`${baseUrl}/health`);
      await response.body.dump();
      if (response.statusCode === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`gateway /health was not 200 within ${timeoutMs} ms`);
}

export function clockTicksPerSecond(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}

/** utime + stime of a process, in clock ticks. */
export function cpuTicks(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // fields 14 and 15 of proc(5)
}

export function memoryMegabytes(pid: number | undefined): { rss_mb: number; hwm_mb: number } {
  const status = pid === undefined ? '' : readFileSync(`/proc/${pid}/status`, 'utf8');
  const kilobytes = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return {
    rss_mb: Math.round(kilobytes('VmRSS') / 102.4) / 10,
    hwm_mb: Math.round(kilobytes('VmHWM') / 102.4) / 10,
  };
}

export async function stopAllChildren(): Promise<void> {
  await Promise.all([...children].map(stopChild));
}

/** Kills every child still running when this process exits or is interrupted. */
export function killChildrenOnExit(): void {
  const killAll = (): void => {
    for (const child of children) child.kill('SIGKILL');
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
  process.once('exit', killAll);
}

/** Runs a benchmark's `main` with its children killed on exit and stopped at the end; a failure sets exit code 1. */
export async function runBench(main: () => Promise<void>): Promise<void> {
  killChildrenOnExit();
  try {
    await main();
  } catch (error) {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  } finally {
    await stopAllChildren();
  }
}

/**
 * CPU time of a process's main (event-loop) thread in µs: the scheduler's own count
 * (`/proc/<pid>/task/<pid>/schedstat`, nanoseconds), else utime + stime (10 ms ticks, which
 * made a 3 s paired round of ~300 ms CPU uncertain by about 3%).
 */
export function mainThreadCpuMicros(pid: number, ticksPerSecond: number): number {
  try {
    const nanoseconds = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]);
    if (Number.isFinite(nanoseconds)) return nanoseconds / 1000;
  } catch {
    // No schedstat (kernel without CONFIG_SCHEDSTATS): the ticks.
  }
  return (mainThreadTicks(pid) * 1e6) / ticksPerSecond;
}

/** utime + stime of a process's main (event-loop) thread, in clock ticks. */
export function mainThreadTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Pins every thread of a process to one CPU (`taskset`, util-linux). */
export function pin(pid: number, cpu: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
