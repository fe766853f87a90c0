/** A cached successful response, replayed byte for byte. */
export interface CachedResponse {
  /** `json` bodies are sent as application/json; `sse` bodies as text/event-stream. */
  readonly kind: 'json' | 'sse';
  readonly body: string;
  /** The instance and model that produced it (for the usage record of a hit). */
  readonly provider: string;
  readonly model: string;
  /** Epoch ms when it was stored. */
  readonly storedAt: number;
}

/**
 * The response cache port (CONTRACT section 8). Implementations: an in-memory LRU bounded
 * by entries and bytes (default) and Redis (`RESPONSE_CACHE_STORE=redis`). Failures of a
 * store never fail a request: `get` answers null and `set` gives up, both logging.
 */
export interface ResponseCacheStore {
  get(key: string): Promise<CachedResponse | null>;
  set(key: string, value: CachedResponse, ttlSeconds: number): Promise<void>;
  /** Cheap health answer for /health/ready (always true in memory). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
