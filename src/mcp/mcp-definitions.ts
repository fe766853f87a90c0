import type { McpServerSettings } from './mcp-server-fields.ts';

/** The MCP gateway's declarations (CONTRACT section 9): upstream servers and virtual servers. */

export const mcpTransports = ['http', 'sse', 'stdio'] as const;

/** `http`: MCP Streamable HTTP; `sse`: the legacy HTTP+SSE transport; `stdio`: a child process. */
export type McpTransport = (typeof mcpTransports)[number];

export const toolDiscoveryModes = ['off', 'search'] as const;

/** `off`: tools are listed; `search`: only the `search_tools` and `call_tool` meta-tools are. */
export type ToolDiscoveryMode = (typeof toolDiscoveryModes)[number];

/** A virtual server's stored setting: a mode, or `''` to inherit the gateway default. */
export type ConfiguredToolDiscovery = ToolDiscoveryMode | '';

/**
 * One upstream MCP server, served at `/mcp/{slug}` under its own tool names. Its settings (display
 * name, enabled, tool filters, user-path scopes, tool timeout) come with it.
 */
export interface McpServerDefinition extends McpServerSettings {
  /** Lower case, `^[a-z0-9][a-z0-9_-]*$`, at most 64 characters; fixed once created. */
  readonly slug: string;
  readonly description: string;
  readonly transport: McpTransport;
  /** The endpoint of an `http` or `sse` server; null for `stdio`. */
  readonly url: string | null;
  /** Sent with every request to an `http` or `sse` server (e.g. its own credentials). */
  readonly headers: Readonly<Record<string, string>>;
  /** The program of a `stdio` server; null otherwise. */
  readonly command: string | null;
  readonly args: readonly string[];
  /** The only variables a `stdio` server gets besides PATH, HOME, USER, LOGNAME, SHELL and TERM. */
  readonly env: Readonly<Record<string, string>>;
}

/** A named subset of servers, served at `/mcp/{name}` with tools namespaced `<slug>_<tool>`. */
export interface McpVirtualServerDefinition {
  /** Same pattern as a server slug. */
  readonly name: string;
  readonly description: string;
  /** Member server slugs, in declared order, without duplicates. */
  readonly servers: readonly string[];
  readonly toolDiscovery: ConfiguredToolDiscovery;
}

/** An admin-managed server (never `stdio`). Times are epoch ms. */
export interface McpServerRow extends McpServerDefinition {
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** An admin-managed virtual server. Times are epoch ms. */
export interface McpVirtualServerRow extends McpVirtualServerDefinition {
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Durable admin-managed MCP servers. Implementations: SQLite and PostgreSQL (src/storage/). */
export interface McpServerStore {
  /** Every stored server, ordered by slug. */
  list(): Promise<McpServerRow[]>;
  /** Inserts or replaces by slug, keeping `createdAt`. */
  upsert(row: McpServerRow): Promise<void>;
  /** False when there was none. */
  remove(slug: string): Promise<boolean>;
}

/** Durable admin-managed virtual MCP servers. */
export interface McpVirtualServerStore {
  /** Every stored virtual server, ordered by name. */
  list(): Promise<McpVirtualServerRow[]>;
  /** Inserts or replaces by name, keeping `createdAt`. */
  upsert(row: McpVirtualServerRow): Promise<void>;
  /** False when there was none. */
  remove(name: string): Promise<boolean>;
}

/** Whether two server declarations would connect the same way (a changed one is redialled). */
export function sameConnection(left: McpServerDefinition, right: McpServerDefinition): boolean {
  const key = (definition: McpServerDefinition) =>
    JSON.stringify([definition.transport, definition.url, definition.headers, definition.command, definition.args, definition.env]);
  return key(left) === key(right);
}
