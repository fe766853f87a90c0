import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
  }

  observe(observation: RequestObservation): void {
    const stream = observation.stream ? 'true' : 'false';
    this.requests.inc({ endpoint: observation.endpoint, provider: observation.provider, status: String(observation.status), stream });
    this.duration.observe({ endpoint: observation.endpoint, provider: observation.provider, stream }, observation.durationSeconds);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
