import type { Logger } from 'pino';
import { cacheScopeOf, responseCacheKey, type CacheCaller, type ResponseCacheScope } from './cache-key.ts';
import type { CachedResponse, ResponseCacheStore } from './response-cache.ts';

export interface ResponseCacheOptions {
  store: ResponseCacheStore;
  ttlSeconds: number;
  /** Largest response kept (characters). */
  maxEntryBytes: number;
  /** Whose requests share entries; default `user_path`. */
  scope?: ResponseCacheScope;
  logger: Logger;
  now?: () => number;
}

/**
 * The response cache as the pipeline sees it: keys, lookups that never fail a request, and
 * stores that happen off the response path.
 */
export class ResponseCache {
  readonly maxEntryBytes: number;
  private readonly options: ResponseCacheOptions;

  constructor(options: ResponseCacheOptions) {
    this.options = options;
    this.maxEntryBytes = options.maxEntryBytes;
  }

  /** The key of a request: what it asks for, and who asks (the configured scope). */
  keyFor(path: string, target: string, body: Record<string, unknown>, caller: CacheCaller): string {
    return responseCacheKey({ path, target, body, scope: cacheScopeOf(this.options.scope ?? 'user_path', caller) });
  }

  async lookup(key: string): Promise<CachedResponse | null> {
    try {
      return await this.options.store.get(key);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'response cache lookup failed');
      return null;
    }
  }

  store(key: string, value: Omit<CachedResponse, 'storedAt'>): void {
    if (value.body.length > this.maxEntryBytes) return;
    const entry = { ...value, storedAt: (this.options.now ?? Date.now)() };
    this.options.store
      .set(key, entry, this.options.ttlSeconds)
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'response cache store failed'));
  }

  ping(): Promise<boolean> {
    return this.options.store.ping();
  }

  close(): Promise<void> {
    return this.options.store.close();
  }
}
