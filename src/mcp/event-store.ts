import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { SessionBinding } from './mcp-sessions.ts';

// Resumable Streamable HTTP streams (ADR 0034): every message a session's transport writes on an
// SSE stream is kept for a while under an event id `<stream id>:<sequence>`, so that a client whose
// connection dropped reconnects with `Last-Event-ID` and gets what it missed. One store per
// session: a Last-Event-ID only ever replays its own session's events.

/** What one session may keep: the last `maxEvents` events, at most `maxBytes`, each for `ttlMs`. */
export interface EventBounds {
  readonly maxEvents: number;
  readonly maxBytes: number;
  /** An event larger than this is not kept (its id is still issued; a replay skips it). */
  readonly maxEventBytes: number;
  readonly ttlMs: number;
}

export const defaultEventBounds: EventBounds = {
  maxEvents: 500,
  maxBytes: 4 * 1024 * 1024,
  maxEventBytes: 1024 * 1024,
  ttlMs: 10 * 60_000,
};
/** The `retry` (ms) a stream's first event tells clients to wait before reconnecting. */
export const streamRetryMs = 1_000;

/** The event stores of one process's sessions, and what other replicas need to resume them. */
export interface SessionEventStores {
  readonly kind: 'memory' | 'redis';
  /** The SDK event store of one session. */
  forSession(sessionId: string): EventStore;
  /** Records who owns a session, so that another replica can replay its events (Redis only). */
  recordSession(sessionId: string, binding: SessionBinding): Promise<void>;
  /** The owner of a session another replica opened (Redis only; null when unknown or expired). */
  sessionBinding(sessionId: string): Promise<SessionBinding | null>;
  /** Replays, for a session of any replica, the events of `lastEventId`'s stream after it. */
  replay(sessionId: string, lastEventId: string, send: (eventId: string, message: JSONRPCMessage) => Promise<void>): Promise<void>;
  /** Drops a session's events (it was ended). */
  forget(sessionId: string): void;
  close(): Promise<void>;
}

/** `[stream id, sequence]` of an event id, or null for one the gateway did not issue. */
export function parseEventId(eventId: string): [string, number] | null {
  const colon = eventId.lastIndexOf(':');
  const sequence = Number(eventId.slice(colon + 1));
  if (colon <= 0 || !Number.isSafeInteger(sequence) || sequence < 0) return null;
  return [eventId.slice(0, colon), sequence];
}

interface StoredEvent {
  readonly streamId: string;
  readonly sequence: number;
  readonly message: JSONRPCMessage;
  readonly bytes: number;
  readonly at: number;
}

interface SessionEvents {
  sequence: number;
  bytes: number;
  readonly events: StoredEvent[];
}

/**
 * In process memory: per session within `bounds`, and all sessions together within
 * `totalBytes` (past it an event is not kept). A session's events go when it ends.
 */
export class MemoryEventStores implements SessionEventStores {
  readonly kind = 'memory';
  private readonly sessions = new Map<string, SessionEvents>();
  private totalBytes = 0;
  private readonly bounds: EventBounds;
  private readonly maxTotalBytes: number;

  constructor(bounds: EventBounds = defaultEventBounds, maxTotalBytes = 64 * 1024 * 1024) {
    this.bounds = bounds;
    this.maxTotalBytes = maxTotalBytes;
  }

  forSession(sessionId: string): EventStore {
    return {
      storeEvent: (streamId, message) => Promise.resolve(this.store(sessionId, streamId, message)),
      getStreamIdForEventId: (eventId) => Promise.resolve(parseEventId(eventId)?.[0]),
      replayEventsAfter: async (lastEventId, { send }) => {
        await this.replay(sessionId, lastEventId, send);
        return parseEventId(lastEventId)?.[0] ?? '';
      },
    };
  }

  recordSession(): Promise<void> {
    return Promise.resolve();
  }

  sessionBinding(): Promise<SessionBinding | null> {
    return Promise.resolve(null);
  }

  async replay(sessionId: string, lastEventId: string, send: (eventId: string, message: JSONRPCMessage) => Promise<void>): Promise<void> {
    const parsed = parseEventId(lastEventId);
    const session = this.sessions.get(sessionId);
    if (parsed === null || session === undefined) return;
    this.prune(session, Date.now());
    const [streamId, after] = parsed;
    for (const event of [...session.events]) {
      if (event.streamId === streamId && event.sequence > after) await send(`${streamId}:${event.sequence}`, event.message);
    }
  }

  forget(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (session === undefined) return;
    this.totalBytes -= session.bytes;
    this.sessions.delete(sessionId);
  }

  close(): Promise<void> {
    this.sessions.clear();
    this.totalBytes = 0;
    return Promise.resolve();
  }

  private store(sessionId: string, streamId: string, message: JSONRPCMessage): string {
    let session = this.sessions.get(sessionId);
    if (session === undefined) {
      session = { sequence: 0, bytes: 0, events: [] };
      this.sessions.set(sessionId, session);
    }
    session.sequence += 1;
    const now = Date.now();
    this.prune(session, now);
    const bytes = Buffer.byteLength(JSON.stringify(message));
    if (bytes <= this.bounds.maxEventBytes) {
      session.events.push({ streamId, sequence: session.sequence, message, bytes, at: now });
      session.bytes += bytes;
      this.totalBytes += bytes;
      while (
        session.events.length > this.bounds.maxEvents ||
        session.bytes > this.bounds.maxBytes ||
        this.totalBytes > this.maxTotalBytes
      ) {
        if (!this.dropOldest(session)) break;
      }
    }
    return `${streamId}:${session.sequence}`;
  }

  private prune(session: SessionEvents, now: number): void {
    while (session.events[0] !== undefined && now - session.events[0].at > this.bounds.ttlMs) this.dropOldest(session);
  }

  private dropOldest(session: SessionEvents): boolean {
    const oldest = session.events.shift();
    if (oldest === undefined) return false;
    session.bytes -= oldest.bytes;
    this.totalBytes -= oldest.bytes;
    return true;
  }
}
