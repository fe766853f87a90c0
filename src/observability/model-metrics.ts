import { Counter, Histogram, type Registry } from 'prom-client';
import type { RequestLogEntry } from '../request-log/request-log-store.ts';

type ModelLabels = 'provider' | 'model' | 'status';

/**
 * Metrics of model requests, read from each settled request log entry (the same fields the
 * log keeps): labelled by serving provider instance, model and status (`none` when no provider
 * or model was reached).
 */
export class ModelMetrics {
  private readonly duration: Histogram<ModelLabels>;
  private readonly firstToken: Histogram<'provider' | 'model'>;
  private readonly tokens: Histogram<ModelLabels | 'type'>;
  private readonly rejections: Counter<'scope' | 'period' | 'kind'>;
  private readonly upstreamErrors: Counter<'provider' | 'code'>;
  private readonly cacheHits: Counter<'model'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.duration = new Histogram({
      name: 'gateway_model_request_duration_seconds',
      help: 'Model requests: time from arrival to the end of the response (streams included), by provider, model and status.',
      labelNames: ['provider', 'model', 'status'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    });
    this.firstToken = new Histogram({
      name: 'gateway_time_to_first_token_seconds',
      help: 'Streamed model requests: time from arrival to the first body byte sent, by provider and model.',
      labelNames: ['provider', 'model'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30],
      registers,
    });
    this.tokens = new Histogram({
      name: 'gateway_tokens_per_request',
      help: 'Tokens metered per model request, by provider, model, status and type (input, output).',
      labelNames: ['provider', 'model', 'status', 'type'],
      buckets: [10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 50000, 100000],
      registers,
    });
    this.rejections = new Counter({
      name: 'gateway_rate_limit_rejections_total',
      help: 'Model requests refused by a rate-limit rule, by the rule’s scope, period and kind.',
      labelNames: ['scope', 'period', 'kind'],
      registers,
    });
    this.upstreamErrors = new Counter({
      name: 'gateway_upstream_errors_total',
      help: 'Failed upstream attempts, by provider instance and error code.',
      labelNames: ['provider', 'code'],
      registers,
    });
    this.cacheHits = new Counter({
      name: 'gateway_cache_hits_total',
      help: 'Model requests answered from the response cache, by model.',
      labelNames: ['model'],
      registers,
    });
  }

  observe(entry: RequestLogEntry): void {
    const provider = entry.provider ?? 'none';
    const model = entry.model ?? 'none';
    const status = String(entry.status);
    this.duration.observe({ provider, model, status }, entry.latencyMs / 1000);
    if (entry.ttftMs !== null) this.firstToken.observe({ provider, model }, entry.ttftMs / 1000);
    if (entry.totalTokens > 0) {
      this.tokens.observe({ provider, model, status, type: 'input' }, entry.promptTokens);
      this.tokens.observe({ provider, model, status, type: 'output' }, entry.completionTokens);
    }
    if (entry.rateLimit !== null) {
      const { scope, period, kind } = entry.rateLimit;
      this.rejections.inc({ scope, period, kind });
    }
    for (const attempt of entry.attempts) {
      if (attempt.errorCode !== null) this.upstreamErrors.inc({ provider: attempt.provider, code: attempt.errorCode });
    }
    if (entry.cacheHit) this.cacheHits.inc({ model: entry.modelRequested ?? model });
  }
}
