import { timeOrderedUuid } from '../core/time-ordered-id.ts';
import type { BudgetService } from '../budgets/budget-service.ts';
import type { TokenEstimate } from '../budgets/estimate.ts';
import type { Principal } from '../auth/principal.ts';
import type { RateLimiter } from '../ratelimit/rate-limiter.ts';
import type { PriceBook, TokenCounts } from './pricing.ts';
import { readTokenCounts } from './pricing.ts';
import type { UsageRecorder } from './usage-recorder.ts';
import type { RequestTrail } from '../request-log/request-trail.ts';

/** Who a metered request was for: the gateway's RequestContext satisfies it. */
export interface MeteringSubject {
  readonly requestId: string;
  readonly principal: Pick<Principal, 'kind' | 'keyId' | 'subject'>;
  readonly userPath: string;
  readonly startedAt: number;
  readonly trail?: Pick<RequestTrail, 'metered'> | null;
}

export interface ExecutionReport {
  context: MeteringSubject;
  endpoint: string;
  /** The instance and model that executed the request. */
  provider: string;
  model: string;
  usage: Record<string, unknown> | null;
  status: number;
  stream: boolean;
  cacheHit?: boolean;
  /**
   * The cost when the price table does not say it (null: unpriced). Gemini's cached contents
   * store tokens, and the table prices no cache storage, so their record's cost is null.
   */
  cost?: number | null;
}

export interface MeteringOptions {
  /** Null when USAGE_ENABLED is off. */
  recorder: UsageRecorder | null;
  budgets: BudgetService | null;
  /** Token caps are charged from here, so they need usage tracking (SEED-SPEC "Enabling"). */
  limiter: RateLimiter | null;
  prices: PriceBook;
  now?: () => number;
}

/**
 * Turns each executed request into a usage record (tokens, cost) and charges its cost to the
 * budgets at once; the record itself is written later, in a batch.
 */
export class Metering {
  private readonly options: MeteringOptions;
  private readonly now: () => number;

  constructor(options: MeteringOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  /** What `estimate` would cost on a model at its price (null: no price), for budget reservations. */
  costEstimate(provider: string, model: string, estimate: TokenEstimate): number | null {
    const tokens = { promptTokens: estimate.promptTokens, completionTokens: estimate.outputTokens, cachedTokens: 0, cacheWriteTokens: 0 };
    return this.options.prices.costOf(provider, model, tokens);
  }

  report(report: ExecutionReport): void {
    const { recorder, budgets, limiter, prices } = this.options;
    const trail = report.context.trail;
    if (recorder === null && !trail) return;
    const tokens = readTokenCounts(report.usage);
    const costUsd = costOf(report, tokens, prices);
    // The request log copies the metered numbers here: one source for tokens and cost (ADR 15).
    trail?.metered(tokens.promptTokens, tokens.completionTokens, tokens.totalTokens, costUsd, report.cacheHit === true);
    if (recorder === null) return;
    const timestamp = this.now();
    const seq = recorder.record({
      id: timeOrderedUuid(timestamp),
      requestId: report.context.requestId,
      timestamp,
      userPath: report.context.userPath,
      // A JWT identity is recorded by its subject where a key id would be: `jwt:<sub>`.
      apiKeyId: report.context.principal.kind === 'jwt' ? `jwt:${report.context.principal.subject ?? ''}` : report.context.principal.keyId,
      endpoint: report.endpoint,
      provider: report.provider,
      model: report.model,
      promptTokens: tokens.promptTokens,
      completionTokens: tokens.completionTokens,
      totalTokens: tokens.totalTokens,
      usage: report.usage,
      costUsd,
      cacheHit: report.cacheHit ?? false,
      stream: report.stream,
      status: report.status,
      latencyMs: Math.max(0, Math.round(performance.now() - report.context.startedAt)),
    });
    budgets?.charge(report.context.userPath, costUsd, seq, timestamp);
    if (report.cacheHit !== true)
      limiter?.recordTokens({ userPath: report.context.userPath, provider: report.provider, model: report.model }, tokens.totalTokens);
  }
}

/**
 * What an executed request cost: nothing for a cache hit (SEED-SPEC function 6; its tokens are
 * recorded as saved) and nothing for a failed attempt that produced no tokens (an error answer,
 * a failover's failed target, a connection refused: the provider bills none of them), whatever
 * the model's price; otherwise its tokens at the model's price, null only when it has none.
 */
function costOf(report: ExecutionReport, tokens: TokenCounts & { totalTokens: number }, prices: PriceBook): number | null {
  if (report.cost !== undefined) return report.cost;
  if (report.cacheHit === true) return 0;
  if (report.status >= 400 && tokens.totalTokens === 0) return 0;
  return prices.costOf(report.provider, report.model, tokens);
}
