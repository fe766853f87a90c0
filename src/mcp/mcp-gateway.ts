import type { Logger } from 'pino';
import type { McpSettings } from './mcp-settings.ts';
import type { McpServerStore, McpVirtualServerStore } from './mcp-definitions.ts';
import { MemoryEventStores, type SessionEventStores } from './event-store.ts';
import { McpRegistry } from './mcp-registry.ts';
import { McpSessions } from './mcp-sessions.ts';
import { McpRequestGuard } from './request-guard.ts';
import { UpstreamManager } from './upstream-manager.ts';
import { defaultUpstreamTimings, type UpstreamTimings } from './upstream-timings.ts';

export interface McpGatewayOptions {
  settings: McpSettings;
  storage: { readonly mcpServers: McpServerStore; readonly mcpVirtualServers: McpVirtualServerStore };
  logger: Logger;
  /** Re-read the admin stores this often, so that writes on other replicas show up. */
  reloadIntervalMs?: number;
  timings?: UpstreamTimings;
  /** Starts every session id (a worker's `w<id>-` in a multi-worker gateway, so requests reach the session's worker). */
  sessionIdPrefix?: string;
  /** The address the gateway listens on (HOST): which Host and Origin headers /mcp accepts by default. */
  listenHost?: string;
}

const defaultReloadIntervalMs = 10_000;

/** The MCP gateway of one process: declarations, upstream connections and downstream sessions. */
export class McpGateway {
  readonly registry: McpRegistry;
  readonly upstreams: UpstreamManager;
  readonly sessions: McpSessions;
  /** Which Host and Origin headers /mcp accepts. */
  readonly guard: McpRequestGuard;
  /** Prefix of the session ids this process issues (empty with one process). */
  readonly sessionIdPrefix: string;
  private readonly logger: Logger;

  /** Where session streams keep their events for resumption (memory, or Redis shared by replicas). */
  readonly events: SessionEventStores;

  private constructor(options: McpGatewayOptions, events: SessionEventStores) {
    this.events = events;
    this.logger = options.logger;
    const { allowedOrigins, allowedHosts } = options.settings;
    this.guard = new McpRequestGuard({ listenHost: options.listenHost ?? '127.0.0.1', allowedOrigins, allowedHosts });
    this.sessionIdPrefix = options.sessionIdPrefix ?? '';
    this.registry = new McpRegistry({
      serverStore: options.storage.mcpServers,
      virtualStore: options.storage.mcpVirtualServers,
      configServers: options.settings.servers,
      configVirtualServers: options.settings.virtualServers,
      defaultToolDiscovery: options.settings.toolDiscovery,
      logger: options.logger,
    });
    const { maxPerServer, idleSeconds } = options.settings.upstreamSessions;
    this.upstreams = new UpstreamManager(options.logger, options.timings ?? defaultUpstreamTimings, {
      maxSessions: maxPerServer,
      idleMs: idleSeconds * 1000,
    });
    this.sessions = new McpSessions(options.logger);
  }

  /** Loads the declarations and starts connecting to every server (in the background). */
  static async start(options: McpGatewayOptions): Promise<McpGateway> {
    const { eventStore, redisUrl } = options.settings;
    const events =
      eventStore === 'redis' && redisUrl !== null
        ? await (await import('./redis-event-store.ts')).createRedisEventStores(redisUrl, options.logger)
        : new MemoryEventStores();
    const gateway = new McpGateway(options, events);
    gateway.registry.onServersChanged((servers) => gateway.upstreams.apply(servers));
    gateway.registry.onChanged(() => gateway.sessions.closeWhere((binding) => !gateway.registry.serves(binding.endpoint)));
    await gateway.registry.reload();
    gateway.upstreams.apply(gateway.registry.serverList());
    await gateway.upstreams.loaded();
    gateway.logProblems();
    gateway.registry.every(options.reloadIntervalMs ?? defaultReloadIntervalMs);
    options.logger.info(
      { servers: gateway.registry.serverList().length, virtual_servers: gateway.registry.virtualServerList().length },
      'mcp gateway ready',
    );
    return gateway;
  }

  /** Ends every downstream session, then closes the upstream connections (stdio children exit). */
  async close(): Promise<void> {
    this.registry.stop();
    await this.sessions.closeAll();
    await this.upstreams.close();
    await this.events.close();
  }

  private logProblems(): void {
    for (const virtual of this.registry.virtualServerList()) {
      const conflict = this.registry.conflictOf(virtual);
      if (conflict !== '') this.logger.error({ mcp_virtual_server: virtual.name }, conflict);
      const missing = this.registry.missingServers(virtual);
      if (missing.length > 0) {
        this.logger.warn(
          { mcp_virtual_server: virtual.name, missing_servers: missing },
          'virtual mcp server has members that match no server',
        );
      }
    }
  }
}
