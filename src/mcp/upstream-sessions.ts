import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import {
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  ListRootsRequestSchema,
  ListRootsResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  type ClientCapabilities,
  type LoggingLevel,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { McpServerDefinition } from './mcp-definitions.ts';
import { endSession, gatewayClientInfo, isTransportFailure, notDelivered, pipeStderr } from './upstream-client.ts';
import { createUpstreamTransport, describeUpstreamError } from './upstream-transport.ts';
import type { UpstreamSessionLimits, UpstreamTimings } from './upstream-timings.ts';

/**
 * The JSON-RPC error code of a request refused because its server has no upstream session left (in
 * the implementation-defined range, clear of the SDK's -32000 connection closed and -32001 timeout).
 */
export const upstreamSessionsExhausted = -32029;

/** What an upstream session needs of the downstream session it serves. */
export interface DownstreamPeer {
  /** What the downstream client declared at initialize: `sampling`, `elicitation` and `roots` are passed on. */
  readonly capabilities: ClientCapabilities;
  /** A request of the upstream server (sampling, elicitation, roots) put to the downstream client. */
  request<T extends AnySchema>(request: ServerRequest, resultSchema: T, signal: AbortSignal): Promise<SchemaOutput<T>>;
  /** A notification of the upstream server for the downstream client (log messages, resource updates). */
  notify(notification: ServerNotification): void;
}

/**
 * The upstream sessions of one server, one per downstream session that uses the server (ADR 0033).
 * At most `maxSessions` are connected at once: past it the least recently used idle one (no call in
 * flight, no subscription) is closed, and when none is idle the request is refused with a JSON-RPC
 * error. A session idle for `idleMs` is closed; its downstream session reconnects on its next call.
 */
export class UpstreamSessionPool {
  readonly definition: () => McpServerDefinition;
  readonly logger: Logger;
  readonly timings: UpstreamTimings;
  /** A call of a session failed at the transport: the shared connection checks the server (its status follows). */
  readonly transportFailed: () => void;
  private readonly limits: UpstreamSessionLimits;
  private readonly handles = new Set<UpstreamSession>();
  private connected = 0;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(
    definition: () => McpServerDefinition,
    logger: Logger,
    timings: UpstreamTimings,
    limits: UpstreamSessionLimits,
    transportFailed: () => void = () => undefined,
  ) {
    this.definition = definition;
    this.transportFailed = transportFailed;
    this.logger = logger;
    this.timings = timings;
    this.limits = limits;
    this.timer = setInterval(() => this.sweep(Date.now()), Math.max(100, Math.min(limits.idleMs / 2, 30_000)));
    this.timer.unref();
  }

  /** Upstream sessions connected or connecting. */
  get size(): number {
    return this.connected;
  }

  /** The upstream session of one downstream session: it connects on first use. */
  open(peer: DownstreamPeer): UpstreamSession {
    if (this.closed) throw new McpError(ErrorCode.InternalError, `mcp server "${this.definition().slug}" is not available`);
    const session = new UpstreamSession(this, peer);
    this.handles.add(session);
    return session;
  }

  /** Takes a slot for a session about to connect, freeing the least recently used idle one when full. */
  reserve(): void {
    const { slug } = this.definition();
    if (this.closed) throw new McpError(ErrorCode.InternalError, `mcp server "${slug}" is not available`);
    if (this.connected >= this.limits.maxSessions) {
      let oldest: UpstreamSession | undefined;
      for (const handle of this.handles) if (handle.idle() && (oldest === undefined || handle.lastUsed < oldest.lastUsed)) oldest = handle;
      if (oldest === undefined) {
        throw new McpError(
          upstreamSessionsExhausted,
          `mcp server "${slug}" has all its ${this.limits.maxSessions} upstream sessions in use ` +
            '(mcp.max_upstream_sessions_per_server): try again later',
        );
      }
      oldest.disconnect();
    }
    this.connected += 1;
  }

  release(): void {
    this.connected -= 1;
  }

  forget(session: UpstreamSession): void {
    this.handles.delete(session);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const handles = [...this.handles];
    this.handles.clear();
    await Promise.all(handles.map((handle) => handle.close()));
  }

  private sweep(now: number): void {
    for (const handle of this.handles) if (handle.idle() && now - handle.lastUsed >= this.limits.idleMs) handle.disconnect();
  }
}

/** A downstream session's way to one server: an upstream session of its own, or the shared client (stdio). */
export interface UpstreamChannel {
  use<Result>(operation: (client: Client) => Promise<Result>): Promise<Result>;
  keepLevel(level: LoggingLevel): void;
  setLevel(level: LoggingLevel): Promise<void>;
  subscribe(uri: string, meta: Record<string, unknown> | undefined): Promise<void>;
  unsubscribe(uri: string, meta: Record<string, unknown> | undefined): Promise<void>;
  rootsChanged(): Promise<void>;
  close(): Promise<void>;
}

/**
 * One downstream session's upstream session with one server. Its client declares only the
 * capabilities the downstream client declared, and relays the server's requests and notifications
 * to it. The logging level and resource subscriptions are kept and applied again after a reconnect.
 */
export class UpstreamSession implements UpstreamChannel {
  lastUsed = Date.now();
  private readonly pool: UpstreamSessionPool;
  private readonly peer: DownstreamPeer;
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  private inFlight = 0;
  private closed = false;
  private level: LoggingLevel | null = null;
  private readonly subscriptions = new Set<string>();

  constructor(pool: UpstreamSessionPool, peer: DownstreamPeer) {
    this.pool = pool;
    this.peer = peer;
  }

  /** Connected, with nothing that needs the session kept: no call in flight, no subscription. */
  idle(): boolean {
    return this.client !== null && this.inFlight === 0 && this.subscriptions.size === 0;
  }

  /**
   * Runs `operation` on the connected client. A transport failure drops the client; the operation is
   * tried again at once only when the upstream provably did not run it (ADR 0010).
   */
  async use<Result>(operation: (client: Client) => Promise<Result>): Promise<Result> {
    this.inFlight += 1;
    this.lastUsed = Date.now();
    try {
      const client = await this.connected();
      try {
        return await operation(client);
      } catch (error) {
        if (!isTransportFailure(error) || this.closed) throw error;
        this.drop(client);
        this.pool.transportFailed();
        if (!notDelivered(error)) throw error;
        return await operation(await this.connected());
      }
    } finally {
      this.inFlight -= 1;
      this.lastUsed = Date.now();
    }
  }

  /** A level set before this session was opened: applied when it connects. */
  keepLevel(level: LoggingLevel): void {
    this.level = level;
  }

  /** `logging/setLevel`, kept for reconnects. */
  async setLevel(level: LoggingLevel): Promise<void> {
    this.level = level;
    await this.use((client) => client.setLoggingLevel(level));
  }

  /** Subscribes once per URI (subscribing again is a no-op, as the protocol has it). */
  async subscribe(uri: string, meta: Record<string, unknown> | undefined): Promise<void> {
    if (this.subscriptions.has(uri)) return;
    await this.use((client) => client.subscribeResource({ uri, ...(meta === undefined ? {} : { _meta: meta }) }));
    this.subscriptions.add(uri);
  }

  async unsubscribe(uri: string, meta: Record<string, unknown> | undefined): Promise<void> {
    if (!this.subscriptions.delete(uri) || this.client === null) return;
    await this.use((client) => client.unsubscribeResource({ uri, ...(meta === undefined ? {} : { _meta: meta }) }));
  }

  /** The downstream client's roots changed. */
  async rootsChanged(): Promise<void> {
    await this.client?.sendRootsListChanged().catch(() => undefined);
  }

  /** Ends the upstream session (idle, or evicted); the handle stays usable and reconnects on its next use. */
  disconnect(): void {
    const client = this.client;
    if (client === null) return;
    this.client = null;
    this.pool.release();
    void endSession(client);
  }

  /** Ends the upstream session for good (its downstream session ended). */
  async close(): Promise<void> {
    this.closed = true;
    this.pool.forget(this);
    const client = this.client;
    if (client === null) return;
    this.client = null;
    this.pool.release();
    await endSession(client);
  }

  private connected(): Promise<Client> {
    if (this.client !== null) return Promise.resolve(this.client);
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connect(): Promise<Client> {
    const definition = this.pool.definition();
    if (this.closed) throw new McpError(ErrorCode.ConnectionClosed, `mcp server "${definition.slug}": the session ended`);
    this.pool.reserve();
    const client = new Client(gatewayClientInfo, { capabilities: passedOn(this.peer.capabilities) });
    this.installHandlers(client);
    client.onclose = () => this.drop(client);
    try {
      const transport = createUpstreamTransport(definition);
      pipeStderr(transport, this.pool.logger, definition.slug);
      await client.connect(transport, { timeout: this.pool.timings.connectTimeoutMs });
      await this.restore(client);
    } catch (error) {
      this.pool.release();
      await client.close().catch(() => undefined);
      if (isTransportFailure(error)) this.pool.transportFailed();
      throw error;
    }
    this.client = client;
    if (this.closed) {
      await this.close();
      throw new McpError(ErrorCode.ConnectionClosed, `mcp server "${definition.slug}": the session ended`);
    }
    return client;
  }

  /** A client that failed or closed: its slot is free, and the next use connects anew. */
  private drop(client: Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.pool.release();
    void client.close().catch(() => undefined);
  }

  private async restore(client: Client): Promise<void> {
    const capabilities = client.getServerCapabilities() ?? {};
    const options = { timeout: this.pool.timings.connectTimeoutMs };
    if (this.level !== null && capabilities.logging) await client.setLoggingLevel(this.level, options);
    for (const uri of this.subscriptions) await client.subscribeResource({ uri }, options);
  }

  private installHandlers(client: Client): void {
    const { capabilities } = this.peer;
    const slug = this.pool.definition().slug;
    const failed = (error: unknown): never => {
      if (error instanceof McpError) throw error;
      throw new McpError(ErrorCode.InternalError, `the client of the session did not answer: ${describeUpstreamError(error)}`);
    };
    if (capabilities.sampling) {
      client.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
        request.params.tools === undefined
          ? this.peer.request(request, CreateMessageResultSchema, extra.signal).catch(failed)
          : this.peer.request(request, CreateMessageResultWithToolsSchema, extra.signal).catch(failed),
      );
    }
    if (capabilities.elicitation) {
      client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
        this.peer.request(request, ElicitResultSchema, extra.signal).catch(failed),
      );
    }
    if (capabilities.roots) {
      client.setRequestHandler(ListRootsRequestSchema, (request, extra) =>
        this.peer.request(request, ListRootsResultSchema, extra.signal).catch(failed),
      );
    }
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => this.peer.notify(notification));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => this.peer.notify(notification));
    client.onerror = (error) =>
      this.pool.logger.debug({ mcp_server: slug, reason: describeUpstreamError(error) }, 'mcp upstream session error');
  }
}

/** The client capabilities the gateway may declare upstream: only those the downstream client declared. */
function passedOn(capabilities: ClientCapabilities): ClientCapabilities {
  const { sampling, elicitation, roots } = capabilities;
  return {
    ...(sampling === undefined ? {} : { sampling }),
    ...(elicitation === undefined ? {} : { elicitation }),
    ...(roots === undefined ? {} : { roots }),
  };
}
