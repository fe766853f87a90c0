import type { Logger } from 'pino';
import { sameConnection, type McpServerDefinition } from './mcp-definitions.ts';
import type { CatalogList } from './upstream-catalog.ts';
import type { UpstreamConnection } from './upstream-connection.ts';
import { defaultSessionLimits, defaultUpstreamTimings, type UpstreamSessionLimits, type UpstreamTimings } from './upstream-timings.ts';

export type CatalogListener = (slug: string, lists: readonly CatalogList[]) => void;

/**
 * The connection class, and with it the MCP client SDK: loaded when the first enabled server is
 * declared, not at start-up (a gateway without MCP servers never loads it).
 */
let connectionClass: Promise<typeof UpstreamConnection> | null = null;

function loadConnectionClass(): Promise<typeof UpstreamConnection> {
  connectionClass ??= import('./upstream-connection.ts').then((module) => module.UpstreamConnection);
  return connectionClass;
}

/**
 * The upstream connections, one per enabled server. `apply` reconciles them with the declarations:
 * an unchanged server keeps its session (a filter or scope edit applies in place), a changed one is
 * redialled, a removed or disabled one is closed.
 */
export class UpstreamManager {
  private readonly connections = new Map<string, UpstreamConnection>();
  private readonly logger: Logger;
  private readonly timings: UpstreamTimings;
  private readonly limits: UpstreamSessionLimits;
  private readonly catalogListeners = new Set<CatalogListener>();
  private closed = false;
  /** Set once the connection class is loaded. */
  private Connection: typeof UpstreamConnection | null = null;
  /** The latest declarations while the connection class loads (applied once it has). */
  private declared: readonly McpServerDefinition[] = [];
  private loading: Promise<void> | null = null;

  constructor(logger: Logger, timings: UpstreamTimings = defaultUpstreamTimings, limits: UpstreamSessionLimits = defaultSessionLimits) {
    this.logger = logger;
    this.timings = timings;
    this.limits = limits;
  }

  /** Calls `listener` when a server's re-listing finds lists changed; returns the function that stops it. */
  onCatalogChanged(listener: CatalogListener): () => void {
    this.catalogListeners.add(listener);
    return () => this.catalogListeners.delete(listener);
  }

  apply(declared: readonly McpServerDefinition[]): void {
    if (this.closed) return;
    const definitions = declared.filter((definition) => definition.enabled);
    const Connection = this.Connection;
    if (Connection === null) {
      this.declared = declared;
      if (definitions.length > 0) {
        this.loading ??= this.load().then(
          () => this.apply(this.declared),
          (error: unknown) => this.logger.error({ err: error }, 'the MCP client could not be loaded'),
        );
      }
      return;
    }
    const wanted = new Map(definitions.map((definition) => [definition.slug, definition]));
    for (const [slug, connection] of this.connections) {
      const definition = wanted.get(slug);
      if (definition !== undefined && sameConnection(connection.definition, definition)) {
        connection.definition = definition;
        continue;
      }
      this.connections.delete(slug);
      void connection.close();
    }
    for (const definition of definitions) {
      if (this.connections.has(definition.slug)) continue;
      const connection = this.create(Connection, definition);
      this.connections.set(definition.slug, connection);
      void connection.start();
    }
  }

  /**
   * Closes the server's connection and dials a new one, resolving once that first attempt has
   * connected or failed (its status and last error then say which). A disabled server is left alone.
   */
  async reconnect(definition: McpServerDefinition): Promise<void> {
    if (this.closed || !definition.enabled) return;
    const Connection = await this.load();
    if (this.closed) return;
    const previous = this.connections.get(definition.slug);
    const connection = this.create(Connection, definition);
    this.connections.set(definition.slug, connection);
    if (previous !== undefined) await previous.close();
    await connection.start();
  }

  /** Resolves once the declarations given to `apply` so far have connections (started, not connected). */
  async loaded(): Promise<void> {
    await this.loading;
  }

  private create(Connection: typeof UpstreamConnection, definition: McpServerDefinition): UpstreamConnection {
    return new Connection(definition, this.logger, this.timings, {
      limits: this.limits,
      onCatalogChanged: (slug, lists) => {
        for (const listener of this.catalogListeners) listener(slug, lists);
      },
    });
  }

  private async load(): Promise<typeof UpstreamConnection> {
    this.Connection ??= await loadConnectionClass();
    return this.Connection;
  }

  get(slug: string): UpstreamConnection | undefined {
    return this.connections.get(slug);
  }

  async close(): Promise<void> {
    this.closed = true;
    const connections = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(connections.map((connection) => connection.close()));
  }
}
