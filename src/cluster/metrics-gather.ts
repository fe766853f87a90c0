import type { WorkerHub } from './worker-hub.ts';

/** How long a scrape waits for the workers' metrics before it is answered with those received. */
const gatherTimeoutMs = 2_000;

/**
 * `/metrics` of a multi-worker gateway counts every worker, whichever answers the scrape: that
 * worker asks (`metrics.gather`), the primary asks every worker for its metrics as JSON
 * (`metrics.collect`, answered by `metrics.part`) and answers with their aggregate: prom-client's
 * cluster aggregation, counters and histograms summed, a gauge by its `aggregator`.
 */
export class MetricsGather {
  /**
   * Each live worker's latest part. A worker that misses a scrape's deadline (or cannot read its
   * metrics) counts with its last part: a sum that left it out would fall, and Prometheus would
   * take the fall for a counter reset.
   */
  private readonly parts = new Map<number, object[]>();
  /** Per collection, the workers not heard from yet. */
  private readonly waiting = new Map<number, { remaining: Set<number>; done(): void }>();
  private nextToken = 1;

  serve(hub: WorkerHub): void {
    hub.on('metrics.gather', async (workerId, { id }) => {
      await this.collect(hub);
      hub.send(workerId, { type: 'metrics.gathered', id, text: await this.aggregate().catch(() => null) });
    });
    hub.on('metrics.part', (workerId, { token, metrics }) => {
      if (metrics !== null) this.parts.set(workerId, metrics);
      this.answered(token, workerId);
    });
  }

  /** A worker that died is not waited for, and no longer counted. */
  workerGone(workerId: number): void {
    this.parts.delete(workerId);
    for (const token of [...this.waiting.keys()]) this.answered(token, workerId);
  }

  private async aggregate(): Promise<string> {
    // prom-client is loaded only when a worker serves metrics (METRICS_ENABLED).
    const { aggregateMetrics } = await import('../observability/metrics.ts');
    return aggregateMetrics([...this.parts.values()]);
  }

  /** Resolves once every live worker has sent its part, or `gatherTimeoutMs` passed. */
  private collect(hub: WorkerHub): Promise<void> {
    const token = this.nextToken++;
    const targets = hub.broadcast({ type: 'metrics.collect', token });
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiting.delete(token);
        resolve();
      };
      const timer = setTimeout(done, gatherTimeoutMs);
      this.waiting.set(token, { remaining: new Set(targets), done });
      if (targets.length === 0) done();
    });
  }

  private answered(token: number, workerId: number): void {
    const waiting = this.waiting.get(token);
    if (waiting === undefined || !waiting.remaining.delete(workerId)) return;
    if (waiting.remaining.size === 0) waiting.done();
  }
}
