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

  serve(hub: WorkerHub): void {
    const poll = new WorkerPoll(hub, 'metrics.collect', gatherTimeoutMs);
    this.poll = poll;
    hub.handle('metrics', async () => {
      const parts = (await poll.ask({})) as object[];
      // prom-client is loaded only when a worker serves metrics (METRICS_ENABLED).
      const { aggregateMetrics } = await import('../observability/metrics.ts');
      return aggregateMetrics(parts);
    });
    hub.handle('metrics.part', (workerId, args) => {
      const { token, metrics } = args as { token: number; metrics: object[] };
      return poll.answered(token, workerId, metrics);
    });
  }

  /** A worker that died is not waited for. */
  workerGone(workerId: number): void {
    this.poll?.workerGone(workerId);
  }
}
