import type { CachedResponse, ResponseCacheStore } from './response-cache.ts';

export interface MemoryCacheStoreOptions {
  /** Most entries held at once (an integer >= 1). */
  readonly maxEntries: number;
  /** Most body bytes held at once (an integer >= 1), counted as UTF-8 bytes of `body`. */
  readonly maxBytes: number;
  /** Epoch ms; a fake clock in tests. */
  readonly now?: () => number;
}

interface MemoryEntry {
  readonly value: CachedResponse;
  readonly bytes: number;
  readonly expiresAt: number;
}

/**
 * The default response cache: an in-process LRU bounded by entry count and by total body
 * size, with a TTL per entry.
 *
 * Size is `Buffer.byteLength(body, 'utf8')`, the bytes a hit sends on the wire, so
 * `maxBytes` reads the way an operator expects; the small fixed fields (provider, model)
 * are not counted. A body larger than `maxBytes` is not stored.
 *
 * Recency is the insertion order of a `Map`: a hit moves its entry to the end, eviction
 * takes from the front, so `get` and `set` are O(1) in the number of entries. Expired
 * entries are misses and are dropped when read; until then they count against the bounds
 * and are evicted in LRU order like any other entry.
 */
export class MemoryCacheStore implements ResponseCacheStore {
  private readonly entries = new Map<string, MemoryEntry>();
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly now: () => number;
  private heldBytes = 0;

  constructor(options: MemoryCacheStoreOptions) {
    this.maxEntries = requirePositiveInteger('maxEntries', options.maxEntries);
    this.maxBytes = requirePositiveInteger('maxBytes', options.maxBytes);
    this.now = options.now ?? Date.now;
  }

  /** Entries held, expired ones included until they are read or evicted. */
  get entryCount(): number {
    return this.entries.size;
  }

  /** Body bytes held (UTF-8). */
  get totalBytes(): number {
    return this.heldBytes;
  }

  async get(key: string): Promise<CachedResponse | null> {
    const entry = this.entries.get(key);
    if (entry === undefined) return null;
    this.remove(key, entry);
    if (this.now() >= entry.expiresAt) return null;
    // Re-inserting moves the entry to the most recently used end.
    this.entries.set(key, entry);
    this.heldBytes += entry.bytes;
    return entry.value;
  }

  /**
   * Stores `value` for `ttlSeconds` (> 0). A write always replaces what the key held: when
   * the new value cannot be stored (oversize, non-positive TTL) the key ends up empty rather
   * than answering with the older response.
   */
  async set(key: string, value: CachedResponse, ttlSeconds: number): Promise<void> {
    const previous = this.entries.get(key);
    if (previous !== undefined) this.remove(key, previous);
    const bytes = Buffer.byteLength(value.body, 'utf8');
    if (bytes > this.maxBytes || !(ttlSeconds > 0)) return;
    this.entries.set(key, { value, bytes, expiresAt: this.now() + ttlSeconds * 1000 });
    this.heldBytes += bytes;
    this.evictBeyondBounds();
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.heldBytes = 0;
  }

  private remove(key: string, entry: MemoryEntry): void {
    this.entries.delete(key);
    this.heldBytes -= entry.bytes;
  }

  private evictBeyondBounds(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.heldBytes <= this.maxBytes) return;
      this.remove(key, entry);
    }
  }
}

function requirePositiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`MemoryCacheStore: ${name} must be an integer >= 1, got ${value}`);
  }
  return value;
}
