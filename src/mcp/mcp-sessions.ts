import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Logger } from 'pino';

/**
 * Who opened a session and where. Every later request on the session must carry the same
 * credential (master key, or the same managed key), resolve to the same user path and address the
 * same endpoint; anything else is answered as if the session did not exist.
 */
export interface SessionBinding {
  /** `open`, `master`, or `api_key:<id>`. */
  readonly credential: string;
  readonly userPath: string;
  /** `server/<slug>`, `virtual/<name>` or `aggregate`. */
  readonly endpoint: string;
}

export interface McpSession {
  readonly id: string;
  readonly binding: SessionBinding;
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
  lastSeen: number;
}

const idleTimeoutMs = 30 * 60_000;
const sweepIntervalMs = 60_000;
/** Sessions held at once; past it the least recently used one is closed. */
export const defaultMaxSessions = 10_000;

/**
 * The open downstream sessions of this process; idle ones are closed after 30 minutes, and
 * at most `maxSessions` are held (clients that open a session per call and never DELETE it
 * would otherwise pile up for 30 minutes under load). The map's order is recency of use.
 */
export class McpSessions {
  private readonly sessions = new Map<string, McpSession>();
  private readonly logger: Logger;
  private readonly timer: NodeJS.Timeout;
  private readonly maxSessions: number;

  constructor(logger: Logger, maxSessions = defaultMaxSessions) {
    this.logger = logger;
    this.maxSessions = maxSessions;
    this.timer = setInterval(() => this.sweep(Date.now()), sweepIntervalMs);
    this.timer.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  add(session: McpSession): void {
    this.sessions.set(session.id, session);
    for (const oldest of this.sessions.values()) {
      if (this.sessions.size <= this.maxSessions) break;
      this.sessions.delete(oldest.id);
      this.logger.debug({ mcp_session: oldest.id }, 'least recently used mcp session closed: too many sessions');
      void closeSession(oldest);
    }
  }

  /** The session, only when `binding` matches the one it was opened with. */
  find(id: string, binding: SessionBinding): McpSession | undefined {
    const session = this.sessions.get(id);
    if (session === undefined || !sameBinding(session.binding, binding)) return undefined;
    session.lastSeen = Date.now();
    // Most recently used last.
    this.sessions.delete(id);
    this.sessions.set(id, session);
    return session;
  }

  /** Forgets a session whose transport closed (DELETE, idle sweep, shutdown). */
  forget(id: string): void {
    this.sessions.delete(id);
  }

  /** Ends every session's notification stream (GET); the sessions stay open for requests in flight. */
  endStreams(): void {
    for (const session of this.sessions.values()) session.transport.closeStandaloneSSEStream();
  }

  /** Ends the sessions whose binding `ended` says is gone (their endpoint was removed or taken by another kind). */
  closeWhere(ended: (binding: SessionBinding) => boolean): void {
    for (const session of this.sessions.values()) {
      if (!ended(session.binding)) continue;
      this.sessions.delete(session.id);
      this.logger.debug({ mcp_session: session.id }, 'mcp session closed: its endpoint is no longer served');
      void closeSession(session);
    }
  }

  async closeAll(): Promise<void> {
    clearInterval(this.timer);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((session) => closeSession(session)));
  }

  private sweep(now: number): void {
    for (const session of this.sessions.values()) {
      if (now - session.lastSeen < idleTimeoutMs) continue;
      this.sessions.delete(session.id);
      this.logger.debug({ mcp_session: session.id }, 'idle mcp session closed');
      void closeSession(session);
    }
  }
}

export function sameBinding(left: SessionBinding, right: SessionBinding): boolean {
  return left.credential === right.credential && left.userPath === right.userPath && left.endpoint === right.endpoint;
}

async function closeSession(session: McpSession): Promise<void> {
  await session.server.close().catch(() => undefined);
  await session.transport.close().catch(() => undefined);
}
