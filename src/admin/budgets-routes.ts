import type { FastifyInstance } from 'fastify';
import type { BudgetService, BudgetStatus } from '../budgets/budget-service.ts';
import { budgetPeriods, isNamedBudgetPeriod } from '../budgets/periods.ts';
import { invalidRequest } from '../errors/gateway-error.ts';
import { normalizeUserPathOrThrow } from '../http/user-path.ts';
import { featureUnavailable, registerFeatureRoutes, invalidParameter, isoTime, objectBody } from './admin-errors.ts';

/** Renders a budget with its spend (CONTRACT section 7). */
export function renderBudget(status: BudgetStatus) {
  return {
    user_path: status.rule.userPath,
    period: status.rule.period,
    period_seconds: status.rule.periodSeconds,
    amount: status.rule.amount,
    spent: roundDollars(status.spent),
    remaining: roundDollars(status.remaining),
    period_start: isoTime(status.periodStart),
    period_end: isoTime(status.periodEnd),
    origin: status.rule.origin,
  };
}

/** The routes themselves; `budgets` is non-null whenever they are reached. */
function defineBudgetRoutes(app: FastifyInstance, budgets: BudgetService | null): void {
  const service = (): BudgetService => {
    if (budgets === null) throw featureUnavailable('budgets', 'BUDGETS_ENABLED (or USAGE_ENABLED)');
    return budgets;
  };
  const list = () => ({ budgets: service().statuses().map(renderBudget) });

  app.get('/admin/budgets', async () => list());

  app.put('/admin/budgets', async (request) => {
    const body = objectBody(request.body);
    const amount = body['amount'];
    if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0) {
      throw invalidRequest('amount must be a number of dollars above 0', { code: 'invalid_body', param: 'amount' });
    }
    await service().upsert(readUserPath(body), readPeriodSeconds(body), amount);
    return list();
  });

  app.delete('/admin/budgets', async (request) => {
    const body = objectBody(request.body);
    await service().remove(readUserPath(body), readPeriodSeconds(body));
    return list();
  });
}

function readUserPath(body: Record<string, unknown>): string {
  const value = body['user_path'];
  if (typeof value !== 'string') throw invalidRequest('user_path is required', { code: 'missing_field', param: 'user_path' });
  return normalizeUserPathOrThrow(value, 'user_path');
}

function readPeriodSeconds(body: Record<string, unknown>): number {
  const period = body['period'];
  const seconds = body['period_seconds'];
  if (typeof period === 'string' && isNamedBudgetPeriod(period)) return budgetPeriods[period];
  if (period === undefined && typeof seconds === 'number' && Number.isInteger(seconds) && seconds >= 60) return seconds;
  throw invalidParameter('period', 'period must be hourly, daily, weekly or monthly, or give period_seconds (an integer of at least 60)');
}

/** Dollars without float noise (1e-10 is far below any real price difference). */
const roundDollars = (value: number): number => Math.round(value * 1e10) / 1e10;

/** `GET|PUT|DELETE /admin/budgets`; 503 `feature_unavailable` when budgets are off. */
export function registerBudgetRoutes(app: FastifyInstance, budgets: BudgetService | null): void {
  const feature = { enabled: budgets !== null, name: 'budgets', setting: 'BUDGETS_ENABLED (or USAGE_ENABLED)' };
  registerFeatureRoutes(app, feature, (scope) => defineBudgetRoutes(scope, budgets));
}
