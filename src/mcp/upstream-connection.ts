import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { McpServerDefinition } from './mcp-definitions.ts';
import { SharedSubscriptions } from './shared-channel.ts';
import { changedLists, emptyCatalog, listCatalog, type CatalogList, type UpstreamCatalog } from './upstream-catalog.ts';
import { endSession, gatewayClientInfo, isTransportFailure, notDelivered, pipeStderr } from './upstream-client.ts';
import { UpstreamSessionPool } from './upstream-sessions.ts';
import { createUpstreamTransport, describeUpstreamError } from './upstream-transport.ts';
import { defaultSessionLimits, defaultUpstreamTimings, type UpstreamSessionLimits, type UpstreamTimings } from './upstream-timings.ts';

export { defaultUpstreamTimings, type UpstreamTimings };

export type UpstreamStatus = 'connecting' | 'connected' | 'error';

const listChangedDebounceMs = 100;

export interface UpstreamConnectionOptions {
  /** Bounds of the per-session upstream clients (ADR 0033). */
  limits?: UpstreamSessionLimits;
  /** Called when a re-listing finds a list changed (tools, prompts, resources). */
  onCatalogChanged?: (slug: string, lists: readonly CatalogList[]) => void;
}

/**
 * One upstream MCP server behind one shared SDK Client, which lists its catalog (ADR 0010); calls of
 * downstream sessions go through their own upstream sessions from `sessions` (ADR 0033). It connects in the background, keeps its
 * status and last catalog (a failed listing keeps the previous one and reports the error), re-lists
 * on a timer and on `list_changed`, and reconnects with exponential backoff. A call that fails at the
 * transport (the upstream restarted and forgot our session, the socket dropped) reconnects and is
 * tried once more.
 */
export class UpstreamConnection {
  definition: McpServerDefinition;
  status: UpstreamStatus = 'connecting';
  lastError: string | null = null;
  connectedAt: number | null = null;
  catalog: UpstreamCatalog = emptyCatalog;
  /** What the server advertised at its last initialize (empty until connected). */
  capabilities: ServerCapabilities = {};
  /** The upstream sessions of downstream sessions, bounded per server. */
  readonly sessions: UpstreamSessionPool;
  /** Resource subscriptions made on the shared client (stdio servers), counted per URI. */
  readonly subscriptions = new SharedSubscriptions();
  private readonly onCatalogChanged: (slug: string, lists: readonly CatalogList[]) => void;
  private readonly logger: Logger;
  private readonly timings: UpstreamTimings;
  private client: Client | null = null;
  private connecting: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private checking: Promise<void> | null = null;
  private closed = false;

  constructor(
    definition: McpServerDefinition,
    logger: Logger,
    timings: UpstreamTimings = defaultUpstreamTimings,
    options: UpstreamConnectionOptions = {},
  ) {
    this.definition = definition;
    this.logger = logger;
    this.timings = timings;
    this.onCatalogChanged = options.onCatalogChanged ?? (() => undefined);
    // A session's call failed at the transport: re-list at once (one check at a time), so that the
    // status reports a server that went away and the shared client reconnects.
    const check = () => {
      this.checking ??= this.refresh().finally(() => (this.checking = null));
    };
    this.sessions = new UpstreamSessionPool(() => this.definition, logger, timings, options.limits ?? defaultSessionLimits, check);
  }

  /** Starts connecting; the promise settles when this first attempt has connected or failed (never rejects). */
  start(): Promise<void> {
    return this.connect();
  }

  /**
   * Runs `operation` on the connected client. A transport failure drops the client (the next call
   * reconnects); the operation is tried again at once only when the upstream provably did not run
   * it (it forgot our session, or refused the connection), so a tool never runs twice.
   */
  async use<Result>(operation: (client: Client) => Promise<Result>): Promise<Result> {
    const client = await this.connectedClient();
    try {
      return await operation(client);
    } catch (error) {
      if (!isTransportFailure(error) || this.closed) throw error;
      this.logger.info(
        { mcp_server: this.definition.slug, reason: describeUpstreamError(error) },
        'mcp upstream call failed: reconnecting',
      );
      if (this.client === client) this.dropClient(client);
      if (!notDelivered(error)) throw error;
      return operation(await this.connectedClient());
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    const client = this.client;
    this.client = null;
    await Promise.all([this.sessions.close(), client === null ? undefined : endSession(client)]);
  }

  private async connectedClient(): Promise<Client> {
    if (this.client !== null) return this.client;
    await this.connect();
    if (this.client === null) throw new Error(`mcp server "${this.definition.slug}" is not connected: ${this.lastError ?? 'connecting'}`);
    return this.client;
  }

  /** One connection attempt at a time; concurrent callers share it. */
  private connect(): Promise<void> {
    this.connecting ??= this.attempt().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async attempt(): Promise<void> {
    if (this.closed || this.client !== null) return;
    this.clearTimer();
    if (this.status !== 'error') this.status = 'connecting';
    const client = new Client(gatewayClientInfo, { capabilities: {} });
    client.onclose = () => {
      if (this.client === client) this.lost(client, 'the connection closed');
    };
    client.onerror = (error) =>
      this.logger.debug({ mcp_server: this.definition.slug, reason: describeUpstreamError(error) }, 'mcp upstream error');
    try {
      const transport = createUpstreamTransport(this.definition);
      pipeStderr(transport, this.logger, this.definition.slug);
      await client.connect(transport, { timeout: this.timings.connectTimeoutMs });
      const catalog = await listCatalog(client, this.timings.listTimeoutMs);
      if (this.closed) return void (await endSession(client));
      this.installListChangedHandlers(client);
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => this.subscriptions.updated(notification));
      await this.subscriptions.restore(client, this.timings.listTimeoutMs);
      this.client = client;
      this.setCatalog(catalog);
      this.capabilities = client.getServerCapabilities() ?? {};
      this.status = 'connected';
      this.lastError = null;
      this.connectedAt = Date.now();
      this.failures = 0;
      this.logger.info({ mcp_server: this.definition.slug, tools: catalog.tools.length }, 'mcp server connected');
      this.schedule(this.timings.refreshIntervalMs, () => this.refresh());
    } catch (error) {
      await client.close().catch(() => undefined);
      this.failed(error, 'mcp server connection failed');
    }
  }

  /** Re-lists the catalog; a failure keeps the old catalog, reports the error and reconnects. */
  private async refresh(): Promise<void> {
    const client = this.client;
    if (client === null || this.closed) return;
    try {
      this.setCatalog(await listCatalog(client, this.timings.listTimeoutMs));
      this.schedule(this.timings.refreshIntervalMs, () => this.refresh());
    } catch (error) {
      if (this.client !== client) return;
      this.dropClient(client);
      this.failed(error, 'mcp server listing failed');
    }
  }

  /** Keeps a new listing and tells the open sessions which lists changed (the first listing announces nothing). */
  private setCatalog(catalog: UpstreamCatalog): void {
    const previous = this.catalog;
    this.catalog = catalog;
    const lists = previous === emptyCatalog ? [] : changedLists(previous, catalog);
    if (lists.length > 0) this.onCatalogChanged(this.definition.slug, lists);
  }

  private lost(client: Client, reason: string): void {
    this.dropClient(client);
    this.failed(new Error(reason), 'mcp server connection lost');
  }

  private dropClient(client: Client): void {
    if (this.client === client) this.client = null;
    void client.close().catch(() => undefined);
  }

  private failed(error: unknown, message: string): void {
    if (this.closed) return;
    this.status = 'error';
    this.lastError = describeUpstreamError(error);
    this.failures += 1;
    const delay = Math.min(1_000 * 2 ** (this.failures - 1), this.timings.maxBackoffMs);
    this.logger.warn({ mcp_server: this.definition.slug, reason: this.lastError, retry_in_ms: delay }, message);
    this.schedule(delay, () => this.connect());
  }

  private installListChangedHandlers(client: Client): void {
    let pending: NodeJS.Timeout | null = null;
    const relist = async (): Promise<void> => {
      if (pending !== null) return;
      pending = setTimeout(() => {
        pending = null;
        if (this.client === client) void this.refresh();
      }, listChangedDebounceMs);
      pending.unref();
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, relist);
    client.setNotificationHandler(PromptListChangedNotificationSchema, relist);
    client.setNotificationHandler(ResourceListChangedNotificationSchema, relist);
  }

  private schedule(delayMs: number, action: () => Promise<void>): void {
    this.clearTimer();
    if (this.closed) return;
    this.timer = setTimeout(() => void action(), delayMs);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
