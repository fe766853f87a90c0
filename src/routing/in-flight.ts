/** Requests in flight per instance and model, for the least_busy strategy. */
export class InFlightCounter {
  // By instance, then model: no `<instance>/<model>` key is built (and hashed) per request.
  private readonly counts = new Map<string, Map<string, number>>();

  get(instance: string, model: string): number {
    return this.counts.get(instance)?.get(model) ?? 0;
  }

  /** Counts one more; the returned function counts it back, once. */
  enter(instance: string, model: string): () => void {
    let models = this.counts.get(instance);
    if (models === undefined) this.counts.set(instance, (models = new Map()));
    const counted = models;
    counted.set(model, (counted.get(model) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = (counted.get(model) ?? 0) - 1;
      if (next > 0) counted.set(model, next);
      else if (counted.delete(model) && counted.size === 0 && this.counts.get(instance) === counted) this.counts.delete(instance);
    };
  }
}
