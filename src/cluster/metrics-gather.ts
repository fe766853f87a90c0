import type { WorkerHub } from './worker-hub.ts';
import { WorkerPoll } from './worker-poll.ts';

/** How long a scrape waits for the workers' metrics before it is answered with those received. */
const gatherTimeoutMs = 2_000;

/**
 * `/metrics` of a multi-worker gateway counts every worker, whichever answers the scrape: that
 * worker asks (`metrics`), the primary asks every worker for its metrics as JSON
 * (`metrics.collect`, answered by `metrics.part`) and answers with their aggregate: prom-client's
 * cluster aggregation, counters and histograms summed, a gauge by its `aggregator`.
 */
export class MetricsGather {
  private poll: WorkerPoll | null = null;
  /**
   * Each live worker's latest part. A worker that misses a scrape's deadline (or cannot read its
   * metrics) counts with its last part: a sum that left it out would fall, and Prometheus would
   * take the fall for a counter reset.
   */
  private readonly parts = new Map<number, object[]>();

  serve(hub: WorkerHub): void {
    const poll = new WorkerPoll(hub, 'metrics.collect', gatherTimeoutMs);
    this.poll = poll;
    hub.handle('metrics', async () => {
      await poll.ask({});
      // prom-client is loaded only when a worker serves metrics (METRICS_ENABLED).
      const { aggregateMetrics } = await import('../observability/metrics.ts');
      return aggregateMetrics([...this.parts.values()]);
    });
    hub.handle('metrics.part', (workerId, args) => {
      const { token, metrics } = args as { token: number; metrics: object[] | null };
      if (metrics !== null) this.parts.set(workerId, metrics);
      return poll.answered(token, workerId);
    });
  }

  /** A worker that died is not waited for. */
  workerGone(workerId: number): void {
    this.parts.delete(workerId);
    this.poll?.workerGone(workerId);
  }
}
