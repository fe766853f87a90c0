import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AnySchema, SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import {
  ErrorCode,
  McpError,
  type ClientCapabilities,
  type LoggingLevel,
  type RequestId,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamConnection } from './upstream-connection.ts';
import type { UpstreamManager } from './upstream-manager.ts';
import { SharedChannel } from './shared-channel.ts';
import type { DownstreamPeer, UpstreamChannel, UpstreamSessionPool } from './upstream-sessions.ts';
import { describeUpstreamError } from './upstream-transport.ts';

/**
 * The upstream sessions of one downstream session, one per member server it used (ADR 0033), and
 * the way back: what an upstream sends during a call (log messages, sampling, elicitation, roots
 * requests) goes to this session's client, on the stream of the call in flight when there is one.
 */
export class SessionUpstreams {
  private readonly server: Server;
  private readonly upstreams: UpstreamManager;
  private readonly links = new Map<string, { pool: UpstreamSessionPool; session: UpstreamChannel }>();
  /** Downstream requests relayed upstream and not answered yet, oldest first. */
  private readonly inFlight: RequestId[] = [];
  private level: LoggingLevel | null = null;
  private closed = false;
  private readonly peer: DownstreamPeer;

  constructor(server: Server, upstreams: UpstreamManager) {
    this.server = server;
    this.upstreams = upstreams;
    const related = () => this.inFlight.at(-1);
    this.peer = {
      get capabilities(): ClientCapabilities {
        return server.getClientCapabilities() ?? {};
      },
      request: <T extends AnySchema>(request: ServerRequest, resultSchema: T, signal: AbortSignal): Promise<SchemaOutput<T>> => {
        const relatedRequestId = related();
        return server.request(request, resultSchema, { signal, ...(relatedRequestId === undefined ? {} : { relatedRequestId }) });
      },
      notify: (notification: ServerNotification) => {
        const relatedRequestId = related();
        void server.notification(notification, relatedRequestId === undefined ? {} : { relatedRequestId }).catch(() => undefined);
      },
    };
  }

  /**
   * Runs an operation on this session's upstream session with `slug`, opened on first use. Its
   * failures (not the server's answers) become `mcp server "X": ...`.
   */
  async use<Result>(
    slug: string,
    requestId: RequestId,
    operation: (client: Client, connection: UpstreamConnection) => Promise<Result>,
  ): Promise<Result> {
    const { connection, session } = this.link(slug);
    this.inFlight.push(requestId);
    try {
      return await session.use((client) => operation(client, connection));
    } catch (error) {
      throw relayedError(slug, error);
    } finally {
      const index = this.inFlight.lastIndexOf(requestId);
      if (index >= 0) this.inFlight.splice(index, 1);
    }
  }

  /** `logging/setLevel`: kept for servers used later, and passed to each of `slugs` that supports logging. */
  async setLevel(level: LoggingLevel, slugs: readonly string[]): Promise<void> {
    this.level = level;
    const logging = slugs.filter((slug) => this.upstreams.get(slug)?.capabilities.logging !== undefined);
    const results = await Promise.allSettled(logging.map(async (slug) => this.link(slug).session.setLevel(level)));
    const failure = results.find((result) => result.status === 'rejected');
    if (failure !== undefined && results.every((result) => result.status === 'rejected')) {
      throw relayedError(logging[0] ?? '', failure.reason);
    }
  }

  async subscribe(slug: string, uri: string, meta: Record<string, unknown> | undefined): Promise<void> {
    try {
      await this.link(slug).session.subscribe(uri, meta);
    } catch (error) {
      throw relayedError(slug, error);
    }
  }

  async unsubscribe(slug: string, uri: string, meta: Record<string, unknown> | undefined): Promise<void> {
    try {
      await this.link(slug).session.unsubscribe(uri, meta);
    } catch (error) {
      throw relayedError(slug, error);
    }
  }

  /** `notifications/roots/list_changed` of the downstream client, passed to every upstream session. */
  rootsChanged(): void {
    for (const { session } of this.links.values()) void session.rootsChanged();
  }

  async close(): Promise<void> {
    this.closed = true;
    const links = [...this.links.values()];
    this.links.clear();
    await Promise.all(links.map(({ session }) => session.close()));
  }

  private link(slug: string): { connection: UpstreamConnection; session: UpstreamChannel } {
    const connection = this.upstreams.get(slug);
    if (connection === undefined || this.closed) throw new McpError(ErrorCode.InternalError, `mcp server "${slug}" is not available`);
    let link = this.links.get(slug);
    if (link?.pool !== connection.sessions) {
      // The server was redialled (its declaration changed): the old upstream session went with it.
      if (link !== undefined) void link.session.close();
      const session =
        connection.definition.transport === 'stdio'
          ? new SharedChannel(connection, (notification) => this.peer.notify(notification))
          : connection.sessions.open(this.peer);
      link = { pool: connection.sessions, session };
      if (this.level !== null) link.session.keepLevel(this.level);
      this.links.set(slug, link);
    }
    return { connection, session: link.session };
  }
}

function relayedError(slug: string, error: unknown): McpError {
  if (error instanceof McpError) return error;
  return new McpError(ErrorCode.InternalError, `mcp server "${slug}": ${describeUpstreamError(error)}`);
}
