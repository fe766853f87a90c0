import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { setTimeout as sleep } from 'node:timers/promises';

import { Pool, request } from 'undici';
import { WebSocket } from 'ws';

import { MASTER_KEY, startGateway, startMock } from './harness.ts';
import { PROJECT_ROOT, freePort, killChildrenOnExit, memoryMegabytes, stopAllChildren } from './processes.ts';

// `npm run soak`: the built gateway in front of the mock upstream, driven with chat
// completions (a tenant mix: 20 teams x a long tail of users as user paths, 10 API keys bound to
// teams plus the master key, one stream in five) for SOAK_REQUESTS requests (default
// 100,000). It samples the gateway's RSS every 10,000 requests and checks that RSS after
// 100,000 stays within 1.3x of RSS after 20,000. Results go to bench/results/soak.json.

const TOTAL = Number(process.env.SOAK_REQUESTS ?? 100_000);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 16);
const SAMPLE_EVERY = 10_000;
const TEAMS = 20;
const USERS_PER_TEAM = 1_000_000;

interface Sample {
  requests: number;
  /**
   * `load`: at once after the requests in flight finished (wherever the V8 heap is in its
   * collection cycle); `gc`: after a full garbage collection (what is retained).
   */
  when: 'load' | 'gc';
  rss_mb: number;
  hwm_mb: number;
  /** Anonymous (heap, malloc) and file-backed (code, mapped files) parts of RSS. */
  rss_anon_mb: number;
  rss_file_mb: number;
  /** V8 heap in use and external memory of the gateway's main thread, from its /metrics. */
  heap_used_mb: number | null;
  external_mb: number | null;
  errors: number;
}

function rssParts(pid: number | undefined): { rss_anon_mb: number; rss_file_mb: number } {
  const status = pid === undefined ? '' : readFileSync(`/proc/${pid}/status`, 'utf8');
  const megabytes = (key: string): number => Math.round(Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 102.4) / 10;
  return { rss_anon_mb: megabytes('RssAnon'), rss_file_mb: megabytes('RssFile') };
}

/** The gateway's inspector (started with --inspect on `port`): full collections on demand. */
async function connectInspector(port: number): Promise<{ collectGarbage(): Promise<void>; close(): void }> {
  const targets = (await (await request(`http://127.0.0.1:${port}/json/list`)).body.json()) as Array<{ webSocketDebuggerUrl: string }>;
  const url = targets[0]?.webSocketDebuggerUrl;
  if (url === undefined) throw new Error('the gateway has no inspector target');
  const socket = new WebSocket(url);
  await once(socket, 'open');
  let id = 0;
  return {
    async collectGarbage() {
      id += 1;
      const sent = id;
      const answered = new Promise<void>((resolve) => {
        const onMessage = (data: Buffer): void => {
          if ((JSON.parse(data.toString()) as { id?: number }).id !== sent) return;
          socket.off('message', onMessage);
          resolve();
        };
        socket.on('message', onMessage);
      });
      socket.send(JSON.stringify({ id: sent, method: 'HeapProfiler.collectGarbage' }));
      await answered;
    },
    close: () => socket.close(),
  };
}

/** Reads heap figures of the gateway from its Prometheus endpoint (METRICS_ENABLED). */
async function heapFigures(pool: Pool): Promise<{ heap_used_mb: number | null; external_mb: number | null }> {
  const response = await pool.request({ path: '/metrics', method: 'GET', headers: { authorization: `Bearer ${MASTER_KEY}` } });
  const text = await response.body.text();
  const read = (name: string): number | null => {
    const found = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return found?.[1] === undefined ? null : Math.round(Number(found[1]) / 104_857.6) / 10;
  };
  return {
    heap_used_mb: read('gateway_process_nodejs_heap_size_used_bytes'),
    external_mb: read('gateway_process_nodejs_external_memory_bytes'),
  };
}

interface Tenant {
  token: string;
  teamPath: string | null;
}

async function createKeys(pool: Pool, count: number): Promise<Tenant[]> {
  const tenants: Tenant[] = [{ token: MASTER_KEY, teamPath: null }];
  for (let index = 0; index < count; index += 1) {
    const teamPath = `/team-${index}`;
    const response = await pool.request({
      path: '/admin/api-keys',
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `soak-${index}`, user_path: teamPath }),
    });
    const body = (await response.body.json()) as { key?: string };
    if (response.statusCode !== 201 || typeof body.key !== 'string') throw new Error(`creating a key: HTTP ${response.statusCode}`);
    tenants.push({ token: body.key, teamPath });
  }
  return tenants;
}

interface SoakRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The status this request must get (an error of the mix is expected, not a failure). */
  expected: number;
}

/**
 * One request of the mix, by sequence number: chat completions (one in five streamed), one
 * in ten through the Responses API, and a few that are refused as a real fleet sees them: a
 * wrong key (401), an unknown model (404), a rate-limited team (429 on `/limited`).
 */
function requestFor(sequence: number, tenants: Tenant[]): SoakRequest {
  const tenant = tenants[sequence % tenants.length] as Tenant;
  const team = Math.floor(Math.random() * TEAMS);
  const user = Math.floor(Math.random() * USERS_PER_TEAM);
  const kind = sequence % 20;
  const headers: Record<string, string> = {
    authorization: `Bearer ${kind === 7 ? `sk-gw-wrong-${sequence}` : tenant.token}`,
    'content-type': 'application/json',
    'x-user-path': kind === 11 ? `/limited/user-${user}` : `/tenant-${team}/user-${user}`,
    'x-request-id': `soak-${sequence}`,
  };
  const content = `Say hello to user ${user} (${sequence})`;
  if (kind === 3 || kind === 13) {
    const body = { model: 'openai/gpt-4o-mini', input: content, max_output_tokens: 64 };
    return { path: '/v1/responses', headers, body: JSON.stringify(body), expected: 200 };
  }
  const stream = sequence % 5 === 0;
  const body = {
    model: kind === 9 ? `openai/no-such-model-${sequence % 100}` : 'openai/gpt-4o-mini',
    messages: [{ role: 'user', content }],
    max_tokens: 64,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
  const expected = kind === 7 ? 401 : kind === 9 ? 404 : 200;
  // The rate-limited team's key is bound elsewhere when it is an API key: only the master key reaches /limited.
  const limited = kind === 11 && tenant.teamPath === null;
  return { path: '/v1/chat/completions', headers, body: JSON.stringify(body), expected: limited ? 429 : expected };
}

/**
 * Sends TOTAL requests from CONCURRENCY workers. Every SAMPLE_EVERY requests the workers stop,
 * the requests in flight finish, and `onProgress` samples the gateway before they go on.
 */
async function drive(pool: Pool, tenants: Tenant[], onProgress: (done: number, errors: number) => Promise<void>): Promise<void> {
  let next = 0;
  let errors = 0;
  let inFlight = 0;
  let gate: Promise<void> | null = null;
  const checkpoint = async (done: number): Promise<void> => {
    let open = (): void => undefined;
    gate = new Promise((resolve) => (open = resolve));
    while (inFlight > 0) await sleep(5);
    await onProgress(done, errors);
    gate = null;
    open();
  };
  const worker = async (): Promise<void> => {
    for (;;) {
      while (gate !== null) await gate;
      if (next >= TOTAL) return;
      const sequence = next;
      next += 1;
      if (sequence > 0 && sequence % SAMPLE_EVERY === 0) await checkpoint(sequence);
      const { path, headers, body, expected } = requestFor(sequence, tenants);
      inFlight += 1;
      try {
        const response = await pool.request({ path, method: 'POST', headers, body });
        await response.body.dump({ limit: Number.MAX_SAFE_INTEGER });
        if (response.statusCode !== expected) errors += 1;
      } catch {
        errors += 1;
      } finally {
        inFlight -= 1;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await onProgress(TOTAL, errors);
}

async function main(): Promise<void> {
  killChildrenOnExit();
  const workDirectory = await mkdtemp(join(tmpdir(), 'gateway-soak-'));
  const samples: Sample[] = [];
  try {
    const mock = await startMock();
    const inspectorPort = await freePort();
    const gateway = await startGateway(
      resolve(PROJECT_ROOT, process.env.SOAK_GATEWAY_ENTRY ?? 'dist/main.js'),
      {
        SET_RATE_LIMIT_: 'rpm=100000000,concurrent=1000',
        SET_RATE_LIMIT_LIMITED: 'rpd=1',
        SET_BUDGET_: 'daily=1000000',
        METRICS_ENABLED: 'true',
        OPENAI_MODELS: 'gpt-4o-mini',
        // The inspector on a free loopback port: the soak asks it for a full GC at each sample.
        NODE_OPTIONS: `--inspect=127.0.0.1:${inspectorPort}${process.env.SOAK_HEAP_DIR === undefined ? '' : ' --heapsnapshot-signal=SIGUSR2'}`,
      },
      mock.url,
      workDirectory,
    );
    const inspector = await connectInspector(inspectorPort);
    const pool = new Pool(gateway.baseUrl, { connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 30_000 });
    const tenants = await createKeys(pool, 10);
    // The one request `/limited` admits today, so that every later one there is a 429.
    const first = await pool.request({
      ...(({ path, headers, body }) => ({ path, headers, body }))(requestFor(11, [tenants[0] as Tenant])),
      method: 'POST',
    });
    await first.body.dump();
    const started = Date.now();
    await drive(pool, tenants, async (requests, errors) => {
      if (process.env.SOAK_HEAP_DIR !== undefined && (requests === 20_000 || requests === 100_000)) {
        gateway.child.kill('SIGUSR2');
        await new Promise((resolve) => setTimeout(resolve, 15_000));
      }
      for (const when of ['load', 'gc'] as const) {
        if (when === 'gc') await inspector.collectGarbage();
        const memory = memoryMegabytes(gateway.child.pid);
        const parts = rssParts(gateway.child.pid);
        const heap = await heapFigures(pool);
        samples.push({ requests, when, ...memory, ...parts, ...heap, errors });
        const seconds = Math.round((Date.now() - started) / 1000);
        process.stdout.write(
          `${requests} requests (${when}): RSS ${memory.rss_mb} MB (anon ${parts.rss_anon_mb}, peak ${memory.hwm_mb}), heap used ${String(heap.heap_used_mb)} MB, ${errors} errors, ${seconds} s\n`,
        );
      }
    });
    await pool.close();
    inspector.close();
  } finally {
    await stopAllChildren();
    if (process.env.SOAK_HEAP_DIR === undefined) await rm(workDirectory, { recursive: true, force: true });
    else process.stdout.write(`heap snapshots in ${workDirectory}\n`);
  }
  await report(samples);
}

/** RSS after 100k over RSS after 20k, sampled the same way. */
function ratioOf(samples: Sample[], when: Sample['when']): number | null {
  const at = (requests: number): number | undefined =>
    samples.find((sample) => sample.requests === requests && sample.when === when)?.rss_mb;
  const first = at(20_000);
  const last = at(100_000);
  return first !== undefined && last !== undefined ? Math.round((last / first) * 1000) / 1000 : null;
}

/**
 * The check is made after a full collection (retention: what the requests left behind); the
 * ratio under load is reported too, and moves with where the V8 heap is in its collection
 * cycle (garbage of 40 to 130 MB between two full collections at this rate).
 */
async function report(samples: Sample[]): Promise<void> {
  const atRest = ratioOf(samples, 'gc');
  const underLoad = ratioOf(samples, 'load');
  const errors = samples.at(-1)?.errors ?? 0;
  const pass = atRest !== null && atRest <= 1.3 && errors === 0;
  const result = {
    date: new Date().toISOString(),
    requests: TOTAL,
    concurrency: CONCURRENCY,
    rss_ratio_100k_to_20k_after_gc: atRest,
    rss_ratio_100k_to_20k_under_load: underLoad,
    pass,
    samples,
  };
  await mkdir(join(PROJECT_ROOT, 'bench/results'), { recursive: true });
  await writeFile(join(PROJECT_ROOT, 'bench/results/soak.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`under load: RSS after 100k / after 20k = ${String(underLoad)}\n`);
  process.stdout.write(
    `${pass ? 'PASS' : 'FAIL'}  RSS after 100k within 1.3x of RSS after 20k, after a full GC (measured ${String(atRest)})\n`,
  );
  if (!pass) process.exitCode = 1;
}

await main();
