import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';

import type { LoadResult } from './load.ts';
import { cpuTicks, freePort, spawnScript, trackChild, waitForLine, waitHealthy } from './processes.ts';

// The pieces every benchmark script shares: the mock upstream process, a gateway process,
// and one run of the load generator with the CPU it cost each process.

export const MASTER_KEY = 'bench-master-key';
export const UPSTREAM_KEY = 'sk-mock';
const MESSAGES: ReadonlyArray<{ role: string; content: string }> = [{ role: 'user', content: 'Say hello' }];

export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** The mock upstream; `extraEnv` shapes its streams (MOCK_CHUNKS, MOCK_CHUNK_EACH_TURN, see mock-server.ts). */
export async function startMock(extraEnv: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const env = { ...process.env, ...extraEnv, MOCK_API_KEY: UPSTREAM_KEY };
  const child = spawnScript('bench/mock-server.ts', ['0'], env);
  const line = await waitForLine(child, 'READY ', 15_000);
  return { child, url: `http://127.0.0.1:${line.slice(6).trim()}/v1` };
}

export async function startGateway(
  entry: string,
  gatewayEnv: Record<string, string>,
  mockUrl: string,
  workDirectory: string,
  startTimeoutMs = 15_000,
): Promise<{ child: ChildProcess; baseUrl: string }> {
  if (!existsSync(entry)) throw new Error(`${entry} does not exist: build the gateway first (npm run build)`);
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    MASTER_KEY,
    OPENAI_API_KEY: UPSTREAM_KEY,
    OPENAI_BASE_URL: mockUrl,
    OPENAI_MODELS: 'mock-model',
    LOG_LEVEL: 'warn',
    ...gatewayEnv,
  };
  const child = spawn(process.execPath, [entry], { cwd: workDirectory, env });
  trackChild(child, 'gateway');
  child.stdout?.pipe(process.stderr);
  child.stderr?.pipe(process.stderr);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitHealthy(baseUrl, child, startTimeoutMs);
  return { child, baseUrl };
}

export interface LoadSpec {
  target: 'direct' | 'gateway';
  stream: boolean;
  concurrency: number;
  durationSeconds: number;
  warmupSeconds: number;
}

export interface MeasuredLoad extends LoadResult {
  mock_cpu_us_per_request: number;
  gateway_cpu_us_per_request?: number;
}

/** One load-generator run against the mock (direct) or the gateway, with CPU per request. */
export async function measureLoad(
  spec: LoadSpec,
  processes: { mockUrl: string; mockPid: number | undefined; gatewayUrl: string; gatewayPid: number | undefined; ticksPerSecond: number },
  messages: ReadonlyArray<{ role: string; content: string }> = MESSAGES,
): Promise<MeasuredLoad> {
  const direct = spec.target === 'direct';
  const url = direct ? `${processes.mockUrl}/chat/completions` : `${processes.gatewayUrl}/v1/chat/completions`;
  const body = { model: direct ? 'mock-model' : 'openai/mock-model', messages };
  const args = [
    ...['--url', url, '--concurrency', String(spec.concurrency), '--stream', String(spec.stream)],
    ...['--duration', String(spec.durationSeconds), '--warmup', String(spec.warmupSeconds)],
    ...['--auth', direct ? UPSTREAM_KEY : MASTER_KEY, '--body', JSON.stringify(body)],
  ];
  const mockBefore = cpuTicks(processes.mockPid);
  const gatewayBefore = cpuTicks(processes.gatewayPid);
  const load = await runLoad(args, (spec.durationSeconds + spec.warmupSeconds + 60) * 1000);
  const perRequest = (ticks: number): number => round((ticks * 1e6) / processes.ticksPerSecond / Math.max(1, load.total_requests), 1);
  const result: MeasuredLoad = { ...load, mock_cpu_us_per_request: perRequest(cpuTicks(processes.mockPid) - mockBefore) };
  if (!direct) result.gateway_cpu_us_per_request = perRequest(cpuTicks(processes.gatewayPid) - gatewayBefore);
  return result;
}

async function runLoad(args: string[], limitMs: number): Promise<LoadResult> {
  const child = spawnScript('bench/load.ts', args, process.env);
  const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null]; // stdout fully read
  clearTimeout(timer);
  const line = output.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`load generator failed (exit ${String(code)})`);
  return JSON.parse(line) as LoadResult;
}
