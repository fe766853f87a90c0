import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { reloadServices, type Service } from '../core/service.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { listenPrivately, mcpForwarder } from './mcp-forward.ts';
import { PrimaryLink } from './primary-link.ts';

/** What a worker needs to follow the admin writes made through the other workers. */
export interface WorkerState {
  /** The one list of services: each re-reads what a write elsewhere may have changed. */
  services: readonly Service[];
  /** POST /admin/reload through another worker: this one reads the configuration file again. */
  reloadConfiguration(): Promise<unknown>;
  /** Null without METRICS_ENABLED. */
  metrics: GatewayMetrics | null;
}

/**
 * A worker of a multi-worker gateway (WORKERS > 1) is a replica: it shares state through the
 * stores. The primary only relays MCP sessions' ports, admin-write nudges and metrics scrapes.
 */
export interface ClusterWorker {
  readonly id: number;
  /** Relays other workers' MCP sessions, nudges the others after an admin write, follows their nudges. */
  install(app: FastifyInstance, state: WorkerState): void;
  /** Opens the private port for relayed MCP requests and tells the primary this worker serves. */
  listening(app: FastifyInstance): Promise<void>;
}

export function joinCluster(logger: Logger): ClusterWorker {
  const link = new PrimaryLink();
  // Every line of this process names its worker.
  logger.setBindings({ worker: link.workerId });
  const ports = new Map<number, number>();
  link.on('mcp.ports', (message) => {
    ports.clear();
    for (const [worker, port] of message.ports) ports.set(worker, port);
  });
  return {
    id: link.workerId,
    install(app, state) {
      app.addHook('onRequest', mcpForwarder(link.workerId, ports));
      app.addHook('onSend', async (request, reply, payload) => {
        const write = request.method !== 'GET' && request.method !== 'HEAD';
        // No waiting: the others re-read at once in practice, within RELOAD_INTERVAL_SECONDS at worst (docs/scaling.md).
        if (write && request.url.startsWith('/admin/') && reply.statusCode < 400) link.send({ type: 'changed', route: request.url });
        return payload;
      });
      serveMetrics(link, state.metrics);
      link.on('changed', async ({ route }) => {
        for (const failure of await followWrite(state, route)) logger.warn({ err: failure }, 'worker reload failed');
      });
    },
    async listening(app) {
      const { port } = await listenPrivately(app);
      // Logged first: the primary's 'model gateway listening' line comes after every worker's.
      logger.info({ worker: link.workerId, pid: process.pid }, 'worker listening');
      link.send({ type: 'listening', mcpPort: port });
    },
  };
}

/** An admin write made through another worker: the replica re-read, at once. Returns the failures. */
async function followWrite(state: WorkerState, route: string): Promise<unknown[]> {
  const failures: unknown[] = [];
  if (route.startsWith('/admin/reload')) await state.reloadConfiguration().catch((error: unknown) => failures.push(error));
  return [...failures, ...(await reloadServices(state.services, route))];
}

/** `/metrics` answers for the whole instance (cluster/metrics-gather.ts); this worker gives its own part. */
function serveMetrics(link: PrimaryLink, metrics: GatewayMetrics | null): void {
  if (metrics === null) return;
  metrics.gatherWith(() => link.gatherMetrics());
  link.on('metrics.collect', async ({ token }) => {
    // A part that cannot be read: the primary uses this worker's last one (metrics-gather.ts).
    const part = await metrics.registry.getMetricsAsJSON().catch(() => null);
    link.send({ type: 'metrics.part', token, metrics: part });
  });
}
