import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { McpServerDefinition } from './mcp-definitions.ts';
import { emptyCatalog, listCatalog, type UpstreamCatalog } from './upstream-catalog.ts';
import { createUpstreamTransport, describeUpstreamError } from './upstream-transport.ts';
import { defaultUpstreamTimings, type UpstreamTimings } from './upstream-timings.ts';

export { defaultUpstreamTimings, type UpstreamTimings };

export type UpstreamStatus = 'connecting' | 'connected' | 'error';

const listChangedDebounceMs = 100;
/** How long a closing connection waits for the upstream to acknowledge the end of its session. */
const terminateTimeoutMs = 2_000;

/**
 * One upstream MCP server behind one shared SDK Client. It connects in the background, keeps its
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
  private readonly logger: Logger;
  private readonly timings: UpstreamTimings;
  private client: Client | null = null;
  private connecting: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;

  constructor(definition: McpServerDefinition, logger: Logger, timings: UpstreamTimings = defaultUpstreamTimings) {
    this.definition = definition;
    this.logger = logger;
    this.timings = timings;
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
    if (client !== null) await endSession(client);
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
    const client = new Client({ name: 'model-gateway', version: '0.1.0' }, { capabilities: {} });
    client.onclose = () => {
      if (this.client === client) this.lost(client, 'the connection closed');
    };
    client.onerror = (error) =>
      this.logger.debug({ mcp_server: this.definition.slug, reason: describeUpstreamError(error) }, 'mcp upstream error');
    try {
      const transport = createUpstreamTransport(this.definition);
      this.pipeStderr(transport);
      await client.connect(transport, { timeout: this.timings.connectTimeoutMs });
      const catalog = await listCatalog(client, this.timings.listTimeoutMs);
      if (this.closed) return void (await endSession(client));
      this.installListChangedHandlers(client);
      this.client = client;
      this.catalog = catalog;
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
      this.catalog = await listCatalog(client, this.timings.listTimeoutMs);
      this.schedule(this.timings.refreshIntervalMs, () => this.refresh());
    } catch (error) {
      if (this.client !== client) return;
      this.dropClient(client);
      this.failed(error, 'mcp server listing failed');
    }
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

  private pipeStderr(transport: Transport): void {
    const stderr = 'stderr' in transport ? (transport.stderr as Readable | null) : null;
    if (stderr === null) return;
    stderr.setEncoding('utf8');
    stderr.on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (line.trim() !== '') this.logger.info({ mcp_server: this.definition.slug, stderr: line.slice(0, 1000) }, 'mcp server stderr');
      }
    });
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

/**
 * Closes a client for good. A Streamable HTTP upstream is first told that our session ended (DELETE,
 * bounded in time), so that it does not keep the session until its own idle timeout.
 */
async function endSession(client: Client): Promise<void> {
  const { transport } = client;
  if (transport instanceof StreamableHTTPClientTransport) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, terminateTimeoutMs)));
    await Promise.race([transport.terminateSession().catch(() => undefined), timeout]);
    clearTimeout(timer);
  }
  await client.close().catch(() => undefined);
}

/** The upstream never processed the request: its session was unknown (404) or nobody listened. */
function notDelivered(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) return error.code === 404;
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  if (cause?.code === 'ECONNREFUSED') return true;
  return error instanceof Error && /\(HTTP 404\)/.test(error.message);
}

/** Not an answer of the upstream server (those are McpErrors with a JSON-RPC code) but a broken channel. */
function isTransportFailure(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  return error instanceof Error && error.name !== 'AbortError';
}
