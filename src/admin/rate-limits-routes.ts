import type { FastifyInstance } from 'fastify';
import type { RuleCounts } from '../ratelimit/counter-store.ts';
import { periodLabel } from '../ratelimit/periods.ts';
import type { RateLimiter } from '../ratelimit/rate-limiter.ts';
import type { RateLimitRule } from '../ratelimit/rules.ts';
import { featureUnavailable, registerFeatureRoutes, isoTime, parseBody } from './admin-errors.ts';
import { asBadRequest, readPeriod, readRuleDraft, readScopeAndSubject } from './rate-limit-body.ts';
import type { RateLimitRuleAnswer } from './schemas/answers.ts';
import {
  confirmationSchema,
  rateLimitCodes,
  rateLimitDeleteSchema,
  rateLimitPutSchema,
  rateLimitResetOneSchema,
} from './schemas/bodies.ts';

/** A rule with its live usage, as CONTRACT section 6 lists it. */
export function renderRule({ rule, counts }: { rule: RateLimitRule; counts: RuleCounts }): RateLimitRuleAnswer {
  const concurrent = rule.periodSeconds === 0;
  const seconds = (value: number | null): string | null => (value === null ? null : isoTime(value * 1000));
  return {
    scope: rule.scope,
    subject: rule.subject,
    ...(rule.scope === 'user_path' ? { user_path: rule.subject } : {}),
    period: periodLabel(rule.periodSeconds),
    period_seconds: rule.periodSeconds,
    max_requests: rule.maxRequests,
    max_tokens: rule.maxTokens,
    origin: rule.origin,
    created_at: isoTime(rule.createdAt),
    updated_at: isoTime(rule.updatedAt),
    window_start: seconds(counts.windowStart),
    window_end: seconds(counts.windowEnd),
    requests_used: concurrent ? counts.inFlight : counts.requestsUsed,
    requests_remaining:
      rule.maxRequests === null ? null : Math.max(0, rule.maxRequests - (concurrent ? counts.inFlight : counts.requestsUsed)),
    tokens_used: counts.tokensUsed,
    tokens_remaining: rule.maxTokens === null ? null : Math.max(0, rule.maxTokens - counts.tokensUsed),
    in_flight: counts.inFlight,
  };
}

/** The routes themselves; `limiter` is non-null whenever they are reached. */
function defineRateLimitRoutes(app: FastifyInstance, limiter: RateLimiter | null): void {
  const service = (): RateLimiter => {
    if (limiter === null) throw featureUnavailable('rate limits', 'RATE_LIMITS_ENABLED');
    return limiter;
  };
  const list = async () => ({ rate_limits: (await service().list()).map(renderRule), server_time: new Date().toISOString() });
  const guarded = async (action: () => Promise<unknown>): Promise<void> => {
    await action().catch((error: unknown) => {
      throw asBadRequest(error);
    });
  };

  app.get('/admin/rate-limits', async () => list());

  app.put('/admin/rate-limits', async (request) => {
    const draft = readRuleDraft(parseBody(rateLimitPutSchema, request.body, rateLimitCodes));
    await guarded(() => service().upsert(draft));
    return list();
  });

  app.delete('/admin/rate-limits', async (request) => {
    const body = parseBody(rateLimitDeleteSchema, request.body, rateLimitCodes);
    const { scope, subject } = readScopeAndSubject(body);
    const period = readPeriod(body.limit_key, 'limit_key');
    await guarded(() => service().remove(scope, subject, period));
    return list();
  });

  app.post('/admin/rate-limits/reset-one', async (request) => {
    const body = parseBody(rateLimitResetOneSchema, request.body, rateLimitCodes);
    const { scope, subject } = readScopeAndSubject(body);
    const period = readPeriod(body.limit_key ?? body, 'period');
    await guarded(() => service().resetOne(scope, subject, period));
    return list();
  });

  app.post('/admin/rate-limits/reset', async (request) => {
    service();
    parseBody(confirmationSchema, request.body);
    await service().resetAll();
    return { status: 'ok' as const };
  });
}

/** The five rate-limit operations of SEED-SPEC, shapes of CONTRACT section 6. */
export function registerRateLimitRoutes(app: FastifyInstance, limiter: RateLimiter | null): void {
  const feature = { enabled: limiter !== null, name: 'rate limits', setting: 'RATE_LIMITS_ENABLED' };
  registerFeatureRoutes(app, feature, (scope) => defineRateLimitRoutes(scope, limiter));
}
