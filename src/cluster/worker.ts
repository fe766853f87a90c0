import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import type { StoredGuardrails } from '../guardrails/stored-guardrails.ts';
import type { ConfigReloader } from '../lifecycle/config-reload.ts';
import type { McpGateway } from '../mcp/mcp-gateway.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { canonicalMcpName } from '../mcp/mcp-names.ts';
import type { StatefulServices } from '../services.ts';
import { IpcBudgetStore } from './ipc-budget-store.ts';
import { IpcCounterStore } from './ipc-counter-store.ts';
import { listenPrivately, mcpForwarder } from './mcp-forward.ts';
import { PrimaryLink } from './primary-link.ts';

/** What an admin write made through another worker may have changed in this one. */
export interface WorkerState {
  services: StatefulServices;
  reloader: ConfigReloader;
  guardrails: StoredGuardrails;
  /** Null without METRICS_ENABLED. */
  metrics: GatewayMetrics | null;
}

/** What a worker of a multi-worker gateway (WORKERS > 1) shares through the primary. */
export interface ClusterWorker {
  readonly id: number;
  /** Rate-limit counters held by the primary; null with RATE_LIMITS_STORE=redis (Redis is shared already). */
  readonly counters: IpcCounterStore | null;
  /** Budget reservations held by the primary; null when budgets use Redis. */
  readonly budgets: IpcBudgetStore | null;
  /** Prefix of this worker's MCP session ids. */
  readonly mcpSessionIdPrefix: string;
  /** Relays other workers' MCP sessions, and makes admin writes reach every worker before they are answered. */
  install(app: FastifyInstance, state: WorkerState): void;
  /** Opens the private port for relayed MCP requests and tells the primary this worker serves. */
  listening(app: FastifyInstance): Promise<void>;
}

export function joinCluster(settings: Settings, logger: Logger): ClusterWorker {
  const link = new PrimaryLink();
  // Every line of this process names its worker.
  logger.setBindings({ worker: link.workerId });
  const ports = new Map<number, number>();
  link.on('mcp.ports', (data) => {
    ports.clear();
    for (const [worker, port] of data as Array<[number, number]>) ports.set(worker, port);
  });
  const memoryCounters = settings.rateLimits.enabled && settings.rateLimits.store !== 'redis';
  return {
    id: link.workerId,
    counters: memoryCounters ? new IpcCounterStore(link) : null,
    budgets: settings.budgets.redisUrl === null ? new IpcBudgetStore(link) : null,
    mcpSessionIdPrefix: `w${link.workerId}-`,
    install(app, state) {
      app.addHook('onRequest', mcpForwarder(link.workerId, ports));
      app.addHook('onSend', async (request, reply, payload) => {
        if (!request.url.startsWith('/admin/') || request.method === 'GET' || request.method === 'HEAD' || reply.statusCode >= 400) {
          return payload;
        }
        // Answered once every other worker has re-read what this write changed.
        await link.call('sync', { path: request.url });
        return payload;
      });
      serveMetrics(link, state.metrics);
      link.on('reload', async (data) => {
        const { token, path } = data as { token: number; path: string };
        for (const failure of await reloadAll(state, path)) logger.warn({ err: failure }, 'worker reload failed');
        link.notify('reloaded', token);
      });
    },
    async listening(app) {
      const { port } = await listenPrivately(app);
      link.notify('listening', { mcpPort: port });
      logger.info({ worker: link.workerId, pid: process.pid }, 'worker listening');
    },
  };
}

/** `/metrics` answers for the whole instance (cluster/metrics-gather.ts); this worker gives its own part. */
function serveMetrics(link: PrimaryLink, metrics: GatewayMetrics | null): void {
  if (metrics === null) return;
  metrics.gatherWith(async () => (await link.call('metrics', null)) as string);
  link.on('metrics.collect', async (data) => {
    const { token } = data as { token: number };
    // A part that cannot be read: the primary uses this worker's last one (metrics-gather.ts).
    const part = await metrics.registry.getMetricsAsJSON().catch(() => null);
    link.notify('metrics.part', { token, metrics: part });
  });
}

/**
 * Re-reads everything an admin write may have changed (the replica refresh, at once). Each
 * re-read starts after the write (a periodic one in progress is not joined: core/fresh-run.ts),
 * and all of them have ended, failed or not, before the write is answered. Returns the failures.
 */
async function reloadAll({ services, reloader, guardrails }: WorkerState, path: string): Promise<unknown[]> {
  const failures: unknown[] = [];
  if (path.startsWith('/admin/reload')) await reloader.reload().catch((error: unknown) => failures.push(error));
  const results = await Promise.allSettled([
    services.limiter?.reload(),
    services.apiKeys.reload(),
    services.virtualModels.reload(),
    services.failoverRules.reload(),
    services.mcp?.registry.reload(),
    services.budgets?.refresh(),
    guardrails.reload(),
  ]);
  for (const result of results) if (result.status === 'rejected') failures.push(result.reason);
  await redialNamed(services.mcp, path).catch((error: unknown) => failures.push(error));
  return failures;
}

/**
 * `POST /admin/mcp-servers/{slug}/reconnect` redials the server in every worker: each holds its own
 * connection (and catalog), and a worker left in its backoff, or on a stale catalog, would keep it.
 */
async function redialNamed(mcp: McpGateway | null, path: string): Promise<void> {
  const slug = /^\/admin\/mcp-servers\/([^/?]+)\/reconnect(?:\?|$)/.exec(path)?.[1];
  if (mcp === null || slug === undefined) return;
  const server = mcp.registry.server(canonicalMcpName(decodeURIComponent(slug)));
  if (server !== undefined) await mcp.upstreams.reconnect(server);
}
