import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { defaultEventBounds, parseEventId, type EventBounds, type SessionEventStores } from './event-store.ts';
import type { SessionBinding } from './mcp-sessions.ts';

// The event stores in Redis (`mcp.event_store: redis`, ADR 0034): replicas sharing a Redis replay
// each other's sessions' events, so a client whose stream dropped resumes through any replica.
// Per session: `<prefix>events:<id>` (a list of `<sequence>\n<stream id>\n<message JSON>`),
// `<prefix>seq:<id>`, `<prefix>bytes:<id>` and `<prefix>session:<id>` (the owner's binding).

const prefix = 'gateway:mcp:';
/** How long a session's owner is known to other replicas after its last event (the session idle timeout). */
const sessionTtlMs = 30 * 60_000;
const commandTimeoutMs = 500;
const connectTimeoutMs = 1_000;

/** Appends one event and trims the session to its bounds, atomically; answers the event's sequence. */
const storeScript = `
local seq = redis.call('INCR', KEYS[2])
local entry = seq .. '\\n' .. ARGV[1] .. '\\n' .. ARGV[2]
if string.len(ARGV[2]) <= tonumber(ARGV[5]) then
  redis.call('RPUSH', KEYS[1], entry)
  local bytes = redis.call('INCRBY', KEYS[3], string.len(entry))
  while redis.call('LLEN', KEYS[1]) > tonumber(ARGV[3]) or bytes > tonumber(ARGV[4]) do
    local old = redis.call('LPOP', KEYS[1])
    if not old then break end
    bytes = redis.call('DECRBY', KEYS[3], string.len(old))
  end
end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[6]) end
redis.call('PEXPIRE', KEYS[4], ARGV[7])
return seq
`;

export class RedisEventStores implements SessionEventStores {
  readonly kind = 'redis';
  private available = true;
  private readonly client: Redis;
  private readonly logger: Logger;
  private readonly bounds: EventBounds;

  constructor(client: Redis, logger: Logger, bounds: EventBounds = defaultEventBounds) {
    this.client = client;
    this.logger = logger;
    this.bounds = bounds;
    this.client.on('error', (error: unknown) => this.unavailable(error));
  }

  forSession(sessionId: string): EventStore {
    return {
      storeEvent: (streamId, message) => this.store(sessionId, streamId, message),
      getStreamIdForEventId: (eventId) => Promise.resolve(parseEventId(eventId)?.[0]),
      replayEventsAfter: async (lastEventId, { send }) => {
        await this.replay(sessionId, lastEventId, send);
        return parseEventId(lastEventId)?.[0] ?? '';
      },
    };
  }

  async recordSession(sessionId: string, binding: SessionBinding): Promise<void> {
    try {
      await this.client.set(`${prefix}session:${sessionId}`, JSON.stringify(binding), 'PX', sessionTtlMs);
    } catch (error) {
      this.unavailable(error);
    }
  }

  async sessionBinding(sessionId: string): Promise<SessionBinding | null> {
    try {
      const stored = await this.client.get(`${prefix}session:${sessionId}`);
      return stored === null ? null : (JSON.parse(stored) as SessionBinding);
    } catch (error) {
      this.unavailable(error);
      return null;
    }
  }

  async replay(sessionId: string, lastEventId: string, send: (eventId: string, message: JSONRPCMessage) => Promise<void>): Promise<void> {
    const parsed = parseEventId(lastEventId);
    if (parsed === null) return;
    let entries: string[];
    try {
      entries = await this.client.lrange(`${prefix}events:${sessionId}`, 0, -1);
    } catch (error) {
      this.unavailable(error);
      return;
    }
    const [streamId, after] = parsed;
    for (const entry of entries) {
      const first = entry.indexOf('\n');
      const second = entry.indexOf('\n', first + 1);
      const sequence = Number(entry.slice(0, first));
      if (entry.slice(first + 1, second) !== streamId || !(sequence > after)) continue;
      await send(`${streamId}:${sequence}`, JSON.parse(entry.slice(second + 1)) as JSONRPCMessage);
    }
  }

  forget(sessionId: string): void {
    const keys = ['events', 'seq', 'bytes', 'session'].map((kind) => `${prefix}${kind}:${sessionId}`);
    this.client.del(...keys).catch((error: unknown) => this.unavailable(error));
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }

  /** A Redis that does not answer never breaks a live stream: the event goes out with an id that replays nothing. */
  private async store(sessionId: string, streamId: string, message: JSONRPCMessage): Promise<string> {
    const { maxEvents, maxBytes, maxEventBytes, ttlMs } = this.bounds;
    const keys = ['events', 'seq', 'bytes', 'session'].map((kind) => `${prefix}${kind}:${sessionId}`);
    try {
      const args = [streamId, JSON.stringify(message), maxEvents, maxBytes, maxEventBytes, ttlMs, sessionTtlMs];
      const sequence = await this.client.eval(storeScript, keys.length, ...keys, ...args);
      this.recovered();
      return `${streamId}:${Number(sequence)}`;
    } catch (error) {
      this.unavailable(error);
      return `${streamId}:0`;
    }
  }

  private unavailable(error: unknown): void {
    if (!this.available) return;
    this.available = false;
    this.logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'mcp event store: Redis unavailable');
  }

  private recovered(): void {
    if (this.available) return;
    this.available = true;
    this.logger.info('mcp event store: Redis available again');
  }
}

/** Connects to Redis (ioredis loaded only now); commands fail fast while it is down. */
export async function createRedisEventStores(url: string, logger: Logger, bounds = defaultEventBounds): Promise<RedisEventStores> {
  const { Redis: RedisClient } = await import('../lazy/ioredis.ts');
  const client = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: connectTimeoutMs,
    commandTimeout: commandTimeoutMs,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 2_000),
  });
  await new Promise<void>((resolve) => {
    const settle = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(settle, connectTimeoutMs);
    client.once('ready', settle);
    client.once('error', settle);
  });
  return new RedisEventStores(client, logger, bounds);
}
