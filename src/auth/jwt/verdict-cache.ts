/**
 * Verified tokens and what they grant, kept until their `exp` and bounded: when full, the
 * oldest entry leaves first. A hit is one Map lookup; it does not move the entry (a Map's
 * delete-and-reinsert costs tens of microseconds once it holds thousands of entries).
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
    if (entry.expiresAt > this.now()) return entry.value;
    this.entries.delete(token);
    return undefined;
  }

  set(token: string, value: V, expiresAt: number): void {
    if (!this.entries.has(token) && this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { value, expiresAt });
  }

  get size(): number {
    return this.entries.size;
  }
}
