import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CounterStoreStatus } from '../ratelimit/resilient-counter-store.ts';
import type { RequestLogEntry } from '../request-log/request-log-store.ts';
import { ModelMetrics } from './model-metrics.ts';

export interface RequestObservation {
  /** The route pattern, e.g. `/v1/chat/completions` (never the raw URL: bounded labels). */
  endpoint: string;
  provider: string;
  status: number;
  stream: boolean;
  durationSeconds: number;
}

/** Prometheus metrics of the gateway, served at `/metrics` when METRICS_ENABLED=true. */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'endpoint' | 'provider' | 'status' | 'stream'>;
  private readonly duration: Histogram<'endpoint' | 'provider' | 'stream'>;
  private readonly models: ModelMetrics;
  private guardrails: Counter<'guardrail' | 'action' | 'mode' | 'stage'> | undefined;
  /** With WORKERS > 1, the metrics of every worker (cluster/worker.ts); else this process's. */
  private gather: (() => Promise<string>) | null = null;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'gateway_process_' });
    this.requests = new Counter({
      name: 'gateway_requests_total',
      help: 'Requests answered, by endpoint, serving provider instance, status and streaming.',
      labelNames: ['endpoint', 'provider', 'status', 'stream'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'gateway_request_duration_seconds',
      help: 'Time from request to the end of the response (whole stream included).',
      labelNames: ['endpoint', 'provider', 'stream'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers: [this.registry],
    });
    this.models = new ModelMetrics(this.registry);
  }

  /** A settled model request (src/request-log/): duration, first token, tokens, rejections, upstream errors, cache hits. */
  observeEntry(entry: RequestLogEntry): void {
    this.models.observe(entry);
  }

  observe(observation: RequestObservation): void {
    const stream = observation.stream ? 'true' : 'false';
    this.requests.inc({ endpoint: observation.endpoint, provider: observation.provider, status: String(observation.status), stream });
    this.duration.observe({ endpoint: observation.endpoint, provider: observation.provider, stream }, observation.durationSeconds);
  }

  /**
   * `gateway_rate_limit_store_up` (1 while the shared counter store answers) and
   * `gateway_rate_limit_local_admissions_total` (admissions decided by local counters because
   * it did not: Envoy's `failure_mode_allowed`), read from `status` at each scrape.
   */
  watchRateLimitStore(status: () => CounterStoreStatus): void {
    new Gauge({
      name: 'gateway_rate_limit_store_up',
      help: 'Whether the shared rate-limit counter store (Redis) answers: 1 up, 0 down (fail mode applies).',
      labelNames: ['store', 'fail_mode'],
      registers: [this.registry],
      // Workers aggregated (WORKERS > 1): down as soon as one worker finds the store down.
      aggregator: 'min',
      collect() {
        const current = status();
        this.reset();
        this.set({ store: current.store, fail_mode: current.failMode }, current.available ? 1 : 0);
      },
    });
    let reported = 0;
    new Counter({
      name: 'gateway_rate_limit_local_admissions_total',
      help: 'Admissions decided by this replica’s local counters while the shared store was down (fail-open).',
      labelNames: ['store'],
      registers: [this.registry],
      collect() {
        const current = status();
        this.inc({ store: current.store }, current.localAdmissions - reported);
        reported = current.localAdmissions;
      },
    });
  }

  /** `gateway_guardrail_decisions_total`: what guardrails did (or, in monitor mode, would have done). */
  countGuardrail(decision: { guardrail: string; action: string; mode: string; stage: string }): void {
    this.guardrails ??= new Counter({
      name: 'gateway_guardrail_decisions_total',
      help: 'Guardrail decisions by guardrail, action (redact, block), mode (enforce, monitor) and stage (input, output).',
      labelNames: ['guardrail', 'action', 'mode', 'stage'],
      registers: [this.registry],
    });
    this.guardrails.inc({ guardrail: decision.guardrail, action: decision.action, mode: decision.mode, stage: decision.stage });
  }

  render(): Promise<string> {
    return this.gather?.() ?? this.registry.metrics();
  }

  /** Makes `render` answer with `gather` (the instance's aggregate). */
  gatherWith(gather: () => Promise<string>): void {
    this.gather = gather;
  }
}

/** The metrics of several processes (`getMetricsAsJSON` of each) as one exposition text (WORKERS > 1). */
export function aggregateMetrics(parts: readonly object[]): Promise<string> {
  return AggregatorRegistry.aggregate([...parts]).metrics();
}
