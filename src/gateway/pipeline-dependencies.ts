import type { BudgetService } from '../budgets/budget-service.ts';
import type { ResponseCache } from '../cache/response-cache-service.ts';
import type { Guardrails } from '../guardrails/pipeline.ts';
import type { RateLimiter } from '../ratelimit/rate-limiter.ts';
import type { CircuitBreakers } from '../routing/circuit-breaker.ts';
import type { FailoverRules } from '../routing/failover-rules.ts';
import type { InFlightCounter } from '../routing/in-flight.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import type { VirtualModels } from '../routing/virtual-models.ts';
import type { Metering } from '../usage/metering.ts';

/** What the model pipeline (run-model-request.ts) runs on. */
export interface ChatPipelineDependencies {
  catalog: ModelCatalog;
  metering: Metering;
  /** Null when budgets are off. */
  budgets: BudgetService | null;
  /** Null when rate limits are off. */
  limiter: RateLimiter | null;
  virtualModels: VirtualModels | null;
  /** Failover rules for direct requests; none when absent. */
  failoverRules?: FailoverRules | null;
  breakers: CircuitBreakers;
  inFlight: InFlightCounter;
  /** Null when the response cache is off. */
  cache: ResponseCache | null;
  retries: number;
  retryBaseDelayMs: number;
  /** Null or absent when no guardrail is configured. */
  guardrails?: Guardrails | null;
}

/** What the client's Cache-Control allows for this request. */
export interface CacheMode {
  lookup: boolean;
  store: boolean;
}
