/** Requests in flight per `<instance>/<model>`, for the least_busy strategy. */
export class InFlightCounter {
  private readonly counts = new Map<string, number>();

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** Counts one more; the returned function counts it back, once. */
  enter(key: string): () => void {
    this.counts.set(key, this.get(key) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = this.get(key) - 1;
      if (next <= 0) this.counts.delete(key);
      else this.counts.set(key, next);
    };
  }
}
