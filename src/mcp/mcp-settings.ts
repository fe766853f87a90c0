import type { McpServerDefinition, McpVirtualServerDefinition, ToolDiscoveryMode } from './mcp-definitions.ts';

export type McpEventStoreKind = 'memory' | 'redis';

/** The MCP gateway's settings (CONTRACT section 9). */
export interface McpSettings {
  /** `MCP_ENABLED` / `mcp.enabled`, default true. Off: `/mcp/*` and the MCP admin routes answer 503. */
  readonly enabled: boolean;
  /** `MCP_TOOL_DISCOVERY` / `mcp.tool_discovery`: the default of servers and virtual servers that set none. */
  readonly toolDiscovery: ToolDiscoveryMode;
  /**
   * `MCP_ALLOWED_ORIGINS` / `mcp.allowed_origins`: browser origins (`https://app.example.com`) allowed on
   * /mcp; `*` allows any. Empty (the default) refuses every request that carries an Origin header.
   */
  readonly allowedOrigins: readonly string[];
  /** `MCP_ALLOWED_HOSTS` / `mcp.allowed_hosts`: Host names allowed on /mcp besides the listening ones (lower case), or `*`. */
  readonly allowedHosts: readonly string[];
  /** `MCP_EVENT_STORE` / `mcp.event_store`: where stream events are kept for resumption; `redis` by default when REDIS_URL is set. */
  readonly eventStore: McpEventStoreKind;
  /** REDIS_URL when the event store is `redis`, else null. */
  readonly redisUrl: string | null;
  /** `mcp.servers` merged with `MCP_SERVERS` (the variable wins per slug), by slug. */
  readonly servers: readonly McpServerDefinition[];
  /** `mcp.virtual_servers` merged with `MCP_VIRTUAL_SERVERS` (the variable wins per name), by name. */
  readonly virtualServers: readonly McpVirtualServerDefinition[];
  /**
   * `MCP_MAX_UPSTREAM_SESSIONS_PER_SERVER` / `mcp.max_upstream_sessions_per_server` (default 100) and
   * `MCP_UPSTREAM_SESSION_IDLE_SECONDS` / `mcp.upstream_session_idle_seconds` (default 300): the
   * upstream sessions opened for downstream sessions (ADR 0033).
   */
  readonly upstreamSessions: { readonly maxPerServer: number; readonly idleSeconds: number };
}
