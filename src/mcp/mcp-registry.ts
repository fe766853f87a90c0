import type { Logger } from 'pino';
import { StoreReread } from '../core/store-reread.ts';
import { invalidRequest, notFound, type GatewayError } from '../errors/gateway-error.ts';
import type {
  McpServerDefinition,
  McpServerRow,
  McpServerStore,
  McpVirtualServerDefinition,
  McpVirtualServerRow,
  McpVirtualServerStore,
  ToolDiscoveryMode,
} from './mcp-definitions.ts';
import { userPathAllowed } from './mcp-server-fields.ts';

type Origin = 'config' | 'manual';

/** A server as the gateway knows it: declared in configuration, or stored through the admin API. */
export interface McpServer extends McpServerDefinition {
  readonly origin: Origin;
  /** Epoch ms; the start time for configuration entries. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface McpVirtualServer extends McpVirtualServerDefinition {
  readonly origin: Origin;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** What `/mcp/{name}` serves: one server under its own names, or several servers namespaced. */
export type McpEndpoint =
  | { readonly kind: 'server'; readonly name: string; readonly toolDiscovery: ToolDiscoveryMode }
  | {
      readonly kind: 'virtual' | 'aggregate';
      readonly name: string;
      readonly members: readonly string[];
      readonly toolDiscovery: ToolDiscoveryMode;
    };

export interface McpRegistryOptions {
  serverStore: McpServerStore;
  virtualStore: McpVirtualServerStore;
  configServers: readonly McpServerDefinition[];
  configVirtualServers: readonly McpVirtualServerDefinition[];
  defaultToolDiscovery: ToolDiscoveryMode;
  logger: Logger;
  now?: () => number;
}

/**
 * The declarations of the MCP gateway: configuration entries (read-only, they shadow stored rows of
 * the same name) and admin-managed rows. A real server always keeps `/mcp/{name}`; a virtual server
 * with the same name is listed with a `conflict` and not served.
 */
export class McpRegistry {
  private options: McpRegistryOptions;
  private readonly now: () => number;
  private readonly startedAt: number;
  private servers = new Map<string, McpServer>();
  private virtuals = new Map<string, McpVirtualServer>();
  private readonly listeners: Array<(servers: readonly McpServer[]) => void> = [];
  /** Told after any change of servers or virtual servers (open sessions of a removed endpoint end). */
  private readonly changeListeners: Array<() => void> = [];
  private readonly rereads: StoreReread<[McpServerRow[], McpVirtualServerRow[]]>;
  /** Shadowed store rows already logged (a reload every few seconds would repeat the warning). */
  private readonly shadowed = new Set<string>();

  constructor(options: McpRegistryOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    this.rereads = new StoreReread({
      read: () => Promise.all([options.serverStore.list(), options.virtualStore.list()]),
      apply: ([serverRows, virtualRows]) => this.applyStored(serverRows, virtualRows),
      failed: (error) =>
        options.logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'mcp declarations reload failed'),
    });
  }

  get defaultToolDiscovery(): ToolDiscoveryMode {
    return this.options.defaultToolDiscovery;
  }

  /** Reads the stores again, after any read in progress (writes made by other replicas show up); tells listeners when servers changed. */
  reload(): Promise<void> {
    return this.rereads.run();
  }

  /** Re-reads every `intervalMs`, joining a read in progress, until `stop`. */
  every(intervalMs: number): void {
    this.rereads.every(intervalMs);
  }

  stop(): void {
    this.rereads.stop();
  }

  private applyStored(serverRows: readonly McpServerRow[], virtualRows: readonly McpVirtualServerRow[]): void {
    const before = JSON.stringify(this.serverList());
    const virtualsBefore = JSON.stringify(this.virtualServerList());
    this.servers = merge(this.options.configServers, serverRows, this.startedAt, (server) => server.slug, this.shadowWarning('server'));
    this.virtuals = merge(
      this.options.configVirtualServers,
      virtualRows,
      this.startedAt,
      (server) => server.name,
      this.shadowWarning('virtual'),
    );
    if (JSON.stringify(this.serverList()) !== before) this.notify();
    else if (JSON.stringify(this.virtualServerList()) !== virtualsBefore) this.changed();
  }

  /**
   * Hot reload: new configuration declarations, merged with the stored rows at once; listeners
   * connect added servers and drop removed ones (their sessions end), the others are untouched.
   */
  async applyConfig(servers: readonly McpServerDefinition[], virtualServers: readonly McpVirtualServerDefinition[]): Promise<void> {
    this.options = { ...this.options, configServers: servers, configVirtualServers: virtualServers };
    await this.reload();
  }

  /** Called with the whole server list whenever it changes. */
  onServersChanged(listener: (servers: readonly McpServer[]) => void): void {
    this.listeners.push(listener);
  }

  /** Called after any change of servers or virtual servers. */
  onChanged(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  /** Whether the endpoint a session was opened on (its `endpointKey`) is still served under that identity. */
  serves(key: string): boolean {
    const name = key === 'aggregate' ? '' : key.slice(key.indexOf('/') + 1);
    const endpoint = this.resolveEndpoint(name);
    return endpoint !== null && endpointKey(endpoint) === key;
  }

  serverList(): McpServer[] {
    return [...this.servers.values()].sort((left, right) => compare(left.slug, right.slug));
  }

  server(slug: string): McpServer | undefined {
    return this.servers.get(slug);
  }

  virtualServerList(): McpVirtualServer[] {
    return [...this.virtuals.values()].sort((left, right) => compare(left.name, right.name));
  }

  virtualServer(name: string): McpVirtualServer | undefined {
    return this.virtuals.get(name);
  }

  /** Members that no server matches, in member order. */
  missingServers(virtual: McpVirtualServerDefinition): string[] {
    return virtual.servers.filter((slug) => !this.servers.has(slug));
  }

  /** Why the virtual server is not served, or `''`. */
  conflictOf(virtual: McpVirtualServerDefinition): string {
    if (!this.servers.has(virtual.name)) return '';
    return `virtual MCP server "${virtual.name}" is not served: MCP server "${virtual.name}" uses the same name; rename one of them`;
  }

  effectiveToolDiscovery(virtual: McpVirtualServerDefinition): ToolDiscoveryMode {
    return virtual.toolDiscovery === '' ? this.options.defaultToolDiscovery : virtual.toolDiscovery;
  }

  /** `''` is the aggregate of every server (`/mcp`); a server slug wins over a virtual server name. */
  resolveEndpoint(name: string): McpEndpoint | null {
    const toolDiscovery = this.options.defaultToolDiscovery;
    if (name === '') return { kind: 'aggregate', name, members: [...this.servers.keys()].sort(compare), toolDiscovery };
    if (this.servers.has(name)) return { kind: 'server', name, toolDiscovery };
    const virtual = this.virtuals.get(name);
    if (virtual === undefined) return null;
    return { kind: 'virtual', name, members: virtual.servers, toolDiscovery: this.effectiveToolDiscovery(virtual) };
  }

  /**
   * What `/mcp/{name}` serves to a caller on `userPath`. A server hidden from the caller answers as
   * if it did not exist (404, and it still keeps the name from a virtual server); a disabled one
   * answers 404 saying so. Members of virtual and aggregate endpoints are filtered per request.
   */
  endpointFor(name: string, userPath: string): McpEndpoint {
    const endpoint = this.resolveEndpoint(name);
    const server = this.servers.get(name);
    if (endpoint === null || (endpoint.kind === 'server' && server !== undefined && !userPathAllowed(server.userPaths, userPath))) {
      throw notFound(`unknown MCP server or virtual server: ${name}`, { code: 'mcp_endpoint_not_found' });
    }
    if (endpoint.kind === 'server' && server?.enabled === false) {
      throw notFound(`mcp server is disabled: ${name}`, { code: 'mcp_endpoint_not_found' });
    }
    return endpoint;
  }

  /** Whether a caller on `userPath` sees the server: it exists, is enabled, and one of its scopes covers the path. */
  visibleTo(slug: string, userPath: string): boolean {
    const server = this.servers.get(slug);
    return server !== undefined && server.enabled && userPathAllowed(server.userPaths, userPath);
  }

  async upsertServer(definition: McpServerDefinition): Promise<McpServer> {
    const existing = this.servers.get(definition.slug);
    if (existing?.origin === 'config') throw readOnly('server', definition.slug);
    const at = this.now();
    const row = { ...definition, createdAt: existing?.createdAt ?? at, updatedAt: at };
    this.rereads.wrote();
    await this.options.serverStore.upsert(row);
    const server: McpServer = { ...row, origin: 'manual' };
    this.servers.set(definition.slug, server);
    this.notify();
    return server;
  }

  async removeServer(slug: string): Promise<void> {
    const existing = this.servers.get(slug);
    if (existing === undefined) throw notFound(`no MCP server has the slug ${slug}`, { code: 'mcp_server_not_found' });
    if (existing.origin === 'config') throw readOnly('server', slug);
    this.rereads.wrote();
    await this.options.serverStore.remove(slug);
    this.servers.delete(slug);
    this.notify();
  }

  async upsertVirtualServer(definition: McpVirtualServerDefinition): Promise<McpVirtualServer> {
    const existing = this.virtuals.get(definition.name);
    if (existing?.origin === 'config') throw readOnly('virtual', definition.name);
    this.checkMembers(definition);
    const at = this.now();
    const row = { ...definition, createdAt: existing?.createdAt ?? at, updatedAt: at };
    this.rereads.wrote();
    await this.options.virtualStore.upsert(row);
    const virtual: McpVirtualServer = { ...row, origin: 'manual' };
    this.virtuals.set(definition.name, virtual);
    this.changed();
    return virtual;
  }

  async removeVirtualServer(name: string): Promise<void> {
    const existing = this.virtuals.get(name);
    if (existing === undefined) throw notFound(`no virtual MCP server is named ${name}`, { code: 'mcp_virtual_server_not_found' });
    if (existing.origin === 'config') throw readOnly('virtual', name);
    this.rereads.wrote();
    await this.options.virtualStore.remove(name);
    this.virtuals.delete(name);
    this.changed();
  }

  /** Virtual servers cannot nest: a member must name a real server (or none yet: it is then missing). */
  private checkMembers(definition: McpVirtualServerDefinition): void {
    definition.servers.forEach((member, index) => {
      const virtual = member === definition.name || this.virtuals.has(member);
      if (virtual && !this.servers.has(member)) {
        throw invalidRequest(`member "${member}" is a virtual server; virtual servers can only include MCP servers`, {
          code: 'invalid_parameter',
          param: `servers.${index}`,
        });
      }
    });
  }

  private notify(): void {
    const servers = this.serverList();
    for (const listener of this.listeners) listener(servers);
    this.changed();
  }

  private changed(): void {
    for (const listener of this.changeListeners) listener();
  }

  private shadowWarning(kind: 'server' | 'virtual'): (name: string) => void {
    const field = kind === 'server' ? 'mcp_server' : 'mcp_virtual_server';
    return (name) => {
      if (this.shadowed.has(`${kind}/${name}`)) return;
      this.shadowed.add(`${kind}/${name}`);
      this.options.logger.warn(
        { [field]: name },
        `a stored ${kind === 'server' ? 'MCP server' : 'virtual MCP server'} is shadowed by a configuration one`,
      );
    };
  }
}

/** What a session is bound to: `server/<slug>`, `virtual/<name>` or `aggregate`. */
export function endpointKey(endpoint: McpEndpoint): string {
  return endpoint.kind === 'aggregate' ? 'aggregate' : `${endpoint.kind}/${endpoint.name}`;
}

/** Byte order, as the stores list (names are lower-case ASCII anyway). */
function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

function merge<Definition, Row extends Definition & { createdAt: number; updatedAt: number }>(
  configured: readonly Definition[],
  rows: readonly Row[],
  startedAt: number,
  nameOf: (definition: Definition) => string,
  shadowed: (name: string) => void,
): Map<string, Definition & { origin: Origin; createdAt: number; updatedAt: number }> {
  const result = new Map<string, Definition & { origin: Origin; createdAt: number; updatedAt: number }>();
  for (const definition of configured) {
    result.set(nameOf(definition), { ...definition, origin: 'config', createdAt: startedAt, updatedAt: startedAt });
  }
  for (const row of rows) {
    if (result.has(nameOf(row))) {
      shadowed(nameOf(row));
      continue;
    }
    result.set(nameOf(row), { ...row, origin: 'manual' });
  }
  return result;
}

function readOnly(kind: 'server' | 'virtual', name: string): GatewayError {
  const what = kind === 'server' ? `MCP server ${name}` : `virtual MCP server ${name}`;
  return invalidRequest(`the ${what} comes from configuration and is read-only`, {
    status: 409,
    code: kind === 'server' ? 'mcp_server_read_only' : 'mcp_virtual_server_read_only',
  });
}
