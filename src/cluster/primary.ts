import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import { openStorage } from '../storage/open-storage.ts';
import { MetricsGather } from './metrics-gather.ts';
import { WorkerHub } from './worker-hub.ts';

// WORKERS > 1 (docs/adr/0037-workers-are-replicas.md): this process serves no HTTP. It migrates
// the database once, forks the workers (each runs the whole gateway on the shared port, a
// replica sharing state through the stores), relays admin-write nudges, MCP ports and metrics
// scrapes, restarts a worker that crashes, forwards SIGHUP, and on SIGTERM/SIGINT drains every worker.

/** A worker that crashes sooner than this after its start is restarted after this delay (no busy loop). */
const restartBackoffMs = 1_000;
/** Beyond the workers' own shutdown timeout, how long the primary waits before SIGKILL. */
const killGraceMs = 10_000;

export interface PrimaryOptions {
  settings: Settings;
  logger: Logger;
  flushLogs: (timeoutMs: number) => Promise<void>;
}

interface PrimaryState {
  readonly hub: WorkerHub;
  readonly metrics: MetricsGather;
  readonly mcpPorts: Map<number, number>;
  readonly ready: Set<number>;
  readonly startedAt: Map<number, number>;
  readonly live: Map<number, Worker>;
  address: unknown;
  announced: boolean;
  stopping: boolean;
  failed: boolean;
}

export async function runPrimary(options: PrimaryOptions): Promise<void> {
  const { settings, logger } = options;
  if (settings.storage.type === 'sqlite' && settings.storage.sqlitePath === ':memory:') {
    throw new Error('WORKERS > 1 needs a database the workers share: SQLITE_PATH=:memory: is private to each process');
  }
  // Migrations run once, here, before any worker opens the database.
  await (await openStorage(settings.storage)).close();
  const state: PrimaryState = {
    hub: new WorkerHub(),
    metrics: new MetricsGather(),
    mcpPorts: new Map(),
    ready: new Set(),
    startedAt: new Map(),
    live: new Map(),
    address: null,
    announced: false,
    stopping: false,
    failed: false,
  };
  state.metrics.serve(state.hub);
  state.hub.on('listening', (workerId, { mcpPort }) => workerListening(options, state, workerId, mcpPort));
  // An admin write through one worker: the others re-read at once (no answer is waited for).
  state.hub.on('changed', (workerId, { route }) => void state.hub.broadcast({ type: 'changed', route }, workerId));
  cluster.on('listening', (_worker, address) => {
    state.address ??= address;
  });
  cluster.on('exit', (worker, code, signal) => workerExited(options, state, worker, code, signal));
  installSignals(options, state);
  logger.info({ workers: settings.server.workers, pid: process.pid }, 'starting workers');
  reportPerWorkerCounters(settings, logger);
  for (let index = 0; index < settings.server.workers; index += 1) fork(state);
}

function fork(state: PrimaryState): Worker {
  const worker = cluster.fork();
  state.startedAt.set(worker.id, Date.now());
  state.live.set(worker.id, worker);
  state.hub.attach(worker);
  return worker;
}

/** Without a shared store each worker counts alone, as replicas do (docs/scaling.md): said once, at start. */
function reportPerWorkerCounters(settings: Settings, logger: Logger): void {
  const alone = [
    ...(settings.rateLimits.enabled && settings.rateLimits.store !== 'redis' ? ['rate limits'] : []),
    ...(settings.budgets.enabled && settings.budgets.redisUrl === null ? ['budgets'] : []),
  ];
  if (alone.length === 0) return;
  logger.warn(
    { workers: settings.server.workers },
    `WORKERS=${settings.server.workers} without a shared store: ${alone.join(' and ')} count per worker (REDIS_URL and RATE_LIMITS_STORE=redis share them, docs/scaling.md)`,
  );
}

function workerListening(options: PrimaryOptions, state: PrimaryState, workerId: number, mcpPort: number): void {
  state.ready.add(workerId);
  state.mcpPorts.set(workerId, mcpPort);
  state.hub.broadcast({ type: 'mcp.ports', ports: [...state.mcpPorts] });
  if (!state.announced && state.ready.size >= options.settings.server.workers) {
    state.announced = true;
    const { settings } = options;
    options.logger.info(
      {
        address: state.address,
        workers: settings.server.workers,
        config_file: settings.configFile,
        providers: settings.providers.map((provider) => ({ name: provider.name, type: provider.type, base_url: provider.baseUrl })),
      },
      'model gateway listening',
    );
  }
}

function workerExited(options: PrimaryOptions, state: PrimaryState, worker: Worker, code: number | null, signal: string | null): void {
  const { logger } = options;
  state.metrics.workerGone(worker.id);
  state.mcpPorts.delete(worker.id);
  if (!state.stopping) state.hub.broadcast({ type: 'mcp.ports', ports: [...state.mcpPorts] });
  const wasReady = state.ready.delete(worker.id);
  state.live.delete(worker.id);
  if (state.stopping) {
    if (code !== 0) state.failed = true;
    logger.info({ worker: worker.id, code, signal }, 'worker exited');
    if (state.live.size === 0) void exitPrimary(options, state.failed ? 1 : 0);
    return;
  }
  if (!wasReady && !state.announced) {
    // A worker that cannot start (a port in use, a database it cannot open) will not start again.
    state.failed = true;
    logger.error({ worker: worker.id, code, signal }, 'a worker failed to start: stopping');
    stopAll(options, state, 'SIGTERM');
    return;
  }
  logger.error({ worker: worker.id, code, signal }, 'worker died: starting another');
  const lived = Date.now() - (state.startedAt.get(worker.id) ?? 0);
  state.startedAt.delete(worker.id);
  setTimeout(() => fork(state), lived < restartBackoffMs ? restartBackoffMs : 0);
}

function installSignals(options: PrimaryOptions, state: PrimaryState): void {
  const onStop = (signal: NodeJS.Signals): void => stopAll(options, state, signal);
  process.on('SIGTERM', onStop);
  process.on('SIGINT', onStop);
  // Configuration reload: every worker reads the file again.
  process.on('SIGHUP', () => {
    for (const worker of state.live.values()) worker.process.kill('SIGHUP');
  });
}

/** Every worker drains (its own graceful shutdown); the primary exits once all have exited. */
function stopAll(options: PrimaryOptions, state: PrimaryState, signal: NodeJS.Signals): void {
  const workers = [...state.live.values()];
  if (!state.stopping) {
    state.stopping = true;
    options.logger.info({ signal, workers: workers.length }, 'shutting down: draining every worker');
    const timer = setTimeout(
      () => {
        options.logger.warn('workers still running after the shutdown timeout: killing them');
        for (const worker of workers) worker.process.kill('SIGKILL');
      },
      options.settings.server.shutdownTimeoutSeconds * 1000 + killGraceMs,
    );
    timer.unref();
  }
  if (workers.length === 0) void exitPrimary(options, state.failed ? 1 : 0);
  // Repeated signals are passed on: a worker treats one within 2 s as the same request.
  for (const worker of workers) worker.process.kill(signal);
}

async function exitPrimary(options: PrimaryOptions, code: number): Promise<void> {
  options.logger.info({ code }, 'all workers exited');
  await options.flushLogs(2_000);
  process.exit(code);
}
