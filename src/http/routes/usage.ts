import type { FastifyInstance } from 'fastify';
import { renderBudget } from '../../admin/budgets-routes.ts';
import { readUsageQuery, renderTotals } from '../../admin/usage-routes.ts';
import { isoTime } from '../../admin/admin-errors.ts';
import { renderRule } from '../../admin/rate-limits-routes.ts';
import type { BudgetService } from '../../budgets/budget-service.ts';
import type { RateLimiter } from '../../ratelimit/rate-limiter.ts';
import { userPathCovers } from '../../core/user-path.ts';
import type { UsageStore } from '../../usage/usage-store.ts';

/**
 * `GET /v1/usage`: the caller's own usage (its user path subtree), the budgets that apply to
 * it or lie below it, and its user-path rate limits with live usage. Counts no quota.
 */
export function registerSelfUsageRoute(
  app: FastifyInstance,
  usage: UsageStore | null,
  budgets: BudgetService | null,
  limiter: RateLimiter | null,
): void {
  app.get('/v1/usage', async (request) => {
    const userPath = request.userPath;
    const query = { ...readUsageQuery({ ...(request.query as Record<string, unknown>), user_path: undefined }, Date.now()), userPath };
    const totals = usage === null ? null : await usage.totals(query);
    const relevant = (rulePath: string): boolean => userPathCovers(rulePath, userPath) || userPathCovers(userPath, rulePath);
    return {
      user_path: userPath,
      from: isoTime(query.from),
      to: isoTime(query.to),
      usage: totals === null ? null : renderTotals(totals),
      budgets: (budgets?.statuses((rule) => relevant(rule.userPath)) ?? []).map(renderBudget),
      rate_limits: (await (limiter?.list((rule) => rule.scope === 'user_path' && relevant(rule.subject)) ?? Promise.resolve([]))).map(
        renderRule,
      ),
    };
  });
}
