import { estimateTokens, type TokenEstimate } from '../budgets/estimate.ts';
import type { BudgetService } from '../budgets/budget-service.ts';
import type { ResponseCache } from '../cache/response-cache-service.ts';
import type { Guardrails } from '../guardrails/pipeline.ts';
import type { RateLimiter } from '../ratelimit/rate-limiter.ts';
import type { CircuitBreakers } from '../routing/circuit-breaker.ts';
import type { FailoverRules } from '../routing/failover-rules.ts';
import type { InFlightCounter } from '../routing/in-flight.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import type { ResolvedTarget } from '../routing/resolve-model.ts';
import type { VirtualModels } from '../routing/virtual-models.ts';
import type { Metering } from '../usage/metering.ts';

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

/**
 * Prices a request's budget reservation on each target tried: its token estimate (computed
 * once, and only when a budget may need it) at the target's price.
 */
export function reservationCost(
  body: Readonly<Record<string, unknown>>,
  dependencies: Pick<ChatPipelineDependencies, 'budgets' | 'metering'>,
): ((target: ResolvedTarget) => number | null) | undefined {
  if (dependencies.budgets === null) return undefined;
  let estimate: TokenEstimate | null = null;
  return (target) => {
    estimate ??= estimateTokens(body);
    return dependencies.metering.costEstimate(target.adapter.name, target.model, estimate);
  };
}
