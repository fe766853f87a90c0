import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CachedResponse, ResponseCacheStore } from './response-cache.ts';

export const defaultRedisCachePrefix = 'gateway:response:';

/** How long one command may take before the request goes on without the cache. */
const defaultCommandTimeoutMs = 200;
/** How long one connection attempt may take. */
const defaultConnectTimeoutMs = 1_000;
/** Reconnect backoff ceiling: keep trying while Redis is down, at most every 2 s. */
const maxReconnectDelayMs = 2_000;

export interface RedisCacheStoreOptions {
  /** A client built for the request path (see `createRedisCacheStore`); the store owns it and quits it on close. */
  readonly client: Redis;
  /** Prepended to every key; default `gateway:response:`. */
  readonly prefix?: string;
  readonly logger: Logger;
}

/**
 * The response cache in Redis: `<prefix><key>` holds the JSON of a `CachedResponse`,
 * written with `SET key value EX ttl`.
 *
 * Redis trouble never reaches a request: `get` answers null, `set` gives up, `ping` answers
 * false. An outage is logged once when first seen (a command failure or a connection
 * error) and once more when Redis answers again.
 */
export class RedisCacheStore implements ResponseCacheStore {
  private readonly client: Redis;
  private readonly prefix: string;
  private readonly logger: Logger;
  private available = true;
  private closed = false;

  constructor(options: RedisCacheStoreOptions) {
    this.client = options.client;
    this.prefix = options.prefix ?? defaultRedisCachePrefix;
    this.logger = options.logger;
    this.client.on('error', (error: unknown) => this.markUnavailable(error));
    this.client.on('ready', () => this.markAvailable());
  }

  async get(key: string): Promise<CachedResponse | null> {
    let stored: string | null;
    try {
      stored = await this.client.get(this.prefix + key);
    } catch (error) {
      this.markUnavailable(error);
      return null;
    }
    this.markAvailable();
    if (stored === null) return null;
    const value = decodeCachedResponse(stored);
    if (value === null) this.logger.warn({ cache_key: key }, 'response cache: ignoring an unreadable Redis entry');
    return value;
  }

  async set(key: string, value: CachedResponse, ttlSeconds: number): Promise<void> {
    if (!(ttlSeconds > 0)) return;
    try {
      await this.client.set(this.prefix + key, encodeCachedResponse(value), 'EX', Math.ceil(ttlSeconds));
    } catch (error) {
      this.markUnavailable(error);
      return;
    }
    this.markAvailable();
  }

  async ping(): Promise<boolean> {
    try {
      const answer = await this.client.ping();
      this.markAvailable();
      return answer === 'PONG';
    } catch (error) {
      this.markUnavailable(error);
      return false;
    }
  }

  /** Quits the connection (or drops it when Redis is unreachable). Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.client.status !== 'ready') {
      this.client.disconnect();
      return;
    }
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }

  private markUnavailable(error: unknown): void {
    if (!this.available || this.closed) return;
    this.available = false;
    this.logger.warn({ err: error }, 'response cache: Redis unavailable, serving requests without the cache');
  }

  private markAvailable(): void {
    if (this.available) return;
    this.available = true;
    this.logger.info('response cache: Redis available again');
  }
}

export interface CreateRedisCacheStoreOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://...`. */
  readonly url: string;
  readonly prefix?: string;
  readonly logger: Logger;
  readonly commandTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
}

/**
 * Connects to Redis and resolves once the first connection attempt has settled (ready,
 * failed, or `connectTimeoutMs` passed), so the first requests find the cache warm when
 * Redis is up. It never rejects: with Redis down the store starts degraded, logs once, and
 * keeps reconnecting in the background.
 */
export async function createRedisCacheStore(options: CreateRedisCacheStoreOptions): Promise<RedisCacheStore> {
  const connectTimeoutMs = options.connectTimeoutMs ?? defaultConnectTimeoutMs;
  // ioredis is loaded only when a Redis store is configured, not at every start-up.
  const { Redis: RedisClient } = await import('../lazy/ioredis.ts');
  const client = new RedisClient(options.url, {
    lazyConnect: false,
    // Fail fast instead of queueing while disconnected: a request must not wait for Redis.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: connectTimeoutMs,
    commandTimeout: options.commandTimeoutMs ?? defaultCommandTimeoutMs,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, maxReconnectDelayMs),
  });
  const store = new RedisCacheStore({ client, prefix: options.prefix, logger: options.logger });
  await firstConnectionSettled(client, connectTimeoutMs);
  return store;
}

function firstConnectionSettled(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const settle = (): void => {
      clearTimeout(timer);
      client.off('ready', settle);
      client.off('error', settle);
      resolve();
    };
    const timer = setTimeout(settle, timeoutMs);
    client.once('ready', settle);
    client.once('error', settle);
  });
}

/** Only the fields of the port are stored, so a value written today reads back the same. */
export function encodeCachedResponse(value: CachedResponse): string {
  const { kind, body, provider, model, storedAt } = value;
  return JSON.stringify({ kind, body, provider, model, storedAt });
}

/** The stored JSON back as a `CachedResponse`, or null when it is not one. */
export function decodeCachedResponse(stored: string): CachedResponse | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const { kind, body, provider, model, storedAt } = parsed as Record<string, unknown>;
  if (kind !== 'json' && kind !== 'sse') return null;
  if (typeof body !== 'string' || typeof provider !== 'string' || typeof model !== 'string') return null;
  if (typeof storedAt !== 'number' || !Number.isFinite(storedAt)) return null;
  return { kind, body, provider, model, storedAt };
}
