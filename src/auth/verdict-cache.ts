/**
 * Verified tokens and what they grant, kept until their `exp` and bounded: the least
 * recently used entry leaves first (a Map keeps insertion order; a hit moves to the end).
 */
export class VerdictCache<V> {
  private readonly entries = new Map<string, { readonly value: V; readonly expiresAt: number }>();

  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(maxEntries: number, now: () => number = Date.now) {
    this.maxEntries = maxEntries;
    this.now = now;
  }

  get(token: string): V | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    this.entries.delete(token);
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(token, entry);
    return entry.value;
  }

  set(token: string, value: V, expiresAt: number): void {
    this.entries.delete(token);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { value, expiresAt });
  }

  get size(): number {
    return this.entries.size;
  }
}
