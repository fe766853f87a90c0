import { parseArgs } from 'node:util';

import { Pool } from 'undici';

// Closed-loop load generator:
//   tsx bench/load.ts --url <url> --concurrency <n> --duration <s> --warmup <s>
//                     --stream <true|false> [--auth <token>] [--body <json>]
// `n` workers share an undici Pool (n connections, keep-alive, pipelining 1). Each worker
// POSTs the chat body, reads the whole response, and starts the next request at once.
// Requests that complete inside the measured window (after the warm-up) are counted.
// Prints one JSON line: {requests, errors, duration_s, rps, p50_ms, p90_ms, p99_ms,
// max_ms, total_requests, ...}; total_requests also counts warm-up and late requests,
// for CPU-per-request figures.

interface LoadSettings {
  url: URL;
  concurrency: number;
  durationSeconds: number;
  warmupSeconds: number;
  stream: boolean;
  auth: string | undefined;
  body: Record<string, unknown>;
}

export interface LoadResult {
  requests: number;
  errors: number;
  duration_s: number;
  rps: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  total_requests: number;
  error_statuses?: Record<string, number>;
  first_error?: string;
}

const DEFAULT_BODY = { model: 'mock-model', messages: [{ role: 'user', content: 'Say hello' }] };
const DONE_MARKER = 'data: [DONE]';

function positiveNumber(name: string, value: string | undefined, fallback: number): number {
  const parsed = value === undefined ? fallback : Number(value);
  if (!Number.isFinite(parsed) || parsed < 0) throw new Error(`--${name} must be a number >= 0`);
  return parsed;
}

function parseLoadArguments(argv: string[]): LoadSettings {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string' },
      concurrency: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      stream: { type: 'string' },
      auth: { type: 'string' },
      body: { type: 'string' },
    },
  });
  if (values.url === undefined) throw new Error('--url is required');
  const concurrency = Math.trunc(positiveNumber('concurrency', values.concurrency, 1));
  if (concurrency < 1) throw new Error('--concurrency must be at least 1');
  if (values.stream !== undefined && values.stream !== 'true' && values.stream !== 'false') {
    throw new Error('--stream must be true or false');
  }
  const body: unknown = values.body === undefined ? DEFAULT_BODY : JSON.parse(values.body);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Error('--body must be a JSON object');
  }
  return {
    url: new URL(values.url),
    concurrency,
    durationSeconds: positiveNumber('duration', values.duration, 8),
    warmupSeconds: positiveNumber('warmup', values.warmup, 2),
    stream: values.stream === 'true',
    auth: values.auth === '' ? undefined : values.auth,
    body: body as Record<string, unknown>,
  };
}

/** Nearest-rank percentile of ascending samples. */
function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank] ?? 0;
}

function round(value: number, digits = 3): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

interface Tally {
  latenciesMs: number[];
  errors: number;
  total: number;
  errorStatuses: Record<string, number>;
  firstError: string | undefined;
}

function countError(tally: Tally, key: string): void {
  tally.errors += 1;
  tally.errorStatuses[key] = (tally.errorStatuses[key] ?? 0) + 1;
}

interface Target {
  path: string;
  headers: Record<string, string>;
  payload: Buffer;
  stream: boolean;
}

/** Sends one request and reads the whole body; returns '' when fine, else an error key. */
async function exchange(pool: Pool, target: Target, tally: Tally): Promise<string> {
  const { path, headers, payload } = target;
  const response = await pool.request({ path, method: 'POST', headers, body: payload });
  const ok = response.statusCode === 200;
  let tail = '';
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    if (!ok) tail = (tail + chunk.toString()).slice(0, 500);
    else if (target.stream) tail = (tail + chunk.toString('latin1')).slice(-64);
  }
  if (!ok) {
    tally.firstError ??= `HTTP ${response.statusCode}: ${tail}`;
    return String(response.statusCode);
  }
  if (target.stream && !tail.includes(DONE_MARKER)) {
    tally.firstError ??= `stream without ${DONE_MARKER}, ending ${JSON.stringify(tail)}`;
    return 'no_done';
  }
  return '';
}

interface Window {
  start: bigint;
  end: bigint;
}

async function worker(pool: Pool, target: Target, tally: Tally, window: Window): Promise<void> {
  while (process.hrtime.bigint() < window.end) {
    const started = process.hrtime.bigint();
    let problem: string;
    try {
      problem = await exchange(pool, target, tally);
    } catch (error) {
      const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : '';
      problem = typeof code === 'string' && code !== '' ? code : 'network_error';
      tally.firstError ??= String(error);
    }
    const finished = process.hrtime.bigint();
    tally.total += 1;
    if (finished < window.start || finished >= window.end) continue;
    if (problem === '') {
      tally.latenciesMs.push(Number(finished - started) / 1e6);
    } else {
      countError(tally, problem);
      await new Promise((resolve) => setTimeout(resolve, 1)); // no hot loop against a dead target
    }
  }
}

async function runLoad(settings: LoadSettings): Promise<LoadResult> {
  const body = settings.stream ? { ...settings.body, stream: true, stream_options: { include_usage: true } } : settings.body;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (settings.auth !== undefined) headers.authorization = `Bearer ${settings.auth}`;
  const target: Target = {
    path: `${settings.url.pathname}${settings.url.search}`,
    headers,
    payload: Buffer.from(JSON.stringify(body)),
    stream: settings.stream,
  };
  const pool = new Pool(settings.url.origin, {
    connections: settings.concurrency,
    pipelining: 1,
    keepAliveTimeout: 30_000,
  });
  const tally: Tally = {
    latenciesMs: [],
    errors: 0,
    total: 0,
    errorStatuses: {},
    firstError: undefined,
  };
  const now = process.hrtime.bigint();
  const start = now + BigInt(Math.round(settings.warmupSeconds * 1e9));
  const window = { start, end: start + BigInt(Math.round(settings.durationSeconds * 1e9)) };
  const workers = Array.from({ length: settings.concurrency }, () => worker(pool, target, tally, window));
  await Promise.all(workers);
  await pool.close();
  return summarise(tally, settings.durationSeconds);
}

function summarise(tally: Tally, durationSeconds: number): LoadResult {
  const sorted = Float64Array.from(tally.latenciesMs).sort();
  const result: LoadResult = {
    requests: sorted.length,
    errors: tally.errors,
    duration_s: durationSeconds,
    rps: durationSeconds > 0 ? round(sorted.length / durationSeconds, 1) : 0,
    p50_ms: round(percentile(sorted, 0.5)),
    p90_ms: round(percentile(sorted, 0.9)),
    p99_ms: round(percentile(sorted, 0.99)),
    max_ms: round(sorted.at(-1) ?? 0),
    total_requests: tally.total,
  };
  if (tally.errors > 0) {
    result.error_statuses = tally.errorStatuses;
    if (tally.firstError !== undefined) result.first_error = tally.firstError;
  }
  return result;
}

async function main(): Promise<void> {
  let settings: LoadSettings;
  try {
    settings = parseLoadArguments(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`load: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
  const result = await runLoad(settings);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();
