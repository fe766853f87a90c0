import type { FastifyInstance } from 'fastify';
import type { BudgetService, BudgetStatus } from '../budgets/budget-service.ts';
import { budgetPeriods } from '../budgets/periods.ts';
import { normalizeUserPathOrThrow } from '../auth/user-path-header.ts';
import { featureUnavailable, registerFeatureRoutes, invalidParameter, isoTime, parseBody } from './admin-errors.ts';
import type { AnswerOf, budgetSchema } from './schemas/answers.ts';
import { budgetCodes, budgetKeySchema, budgetPutSchema } from './schemas/bodies.ts';

/** Renders a budget with its spend (CONTRACT section 7). */
export function renderBudget(status: BudgetStatus): AnswerOf<typeof budgetSchema> {
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
  const list = async () => ({ budgets: service().statuses().map(renderBudget) });

  app.get('/admin/budgets', async () => list());

  app.put('/admin/budgets', async (request) => {
    const body = parseBody(budgetPutSchema, request.body, budgetCodes);
    await service().upsert(readUserPath(body.user_path), readPeriodSeconds(body), body.amount);
    return await list();
  });

  app.delete('/admin/budgets', async (request) => {
    const body = parseBody(budgetKeySchema, request.body, budgetCodes);
    await service().remove(readUserPath(body.user_path), readPeriodSeconds(body));
    return await list();
  });
}

const readUserPath = (value: string): string => normalizeUserPathOrThrow(value, 'user_path');

/** A named period, or `period_seconds` alone (the schema has checked each). */
function readPeriodSeconds(body: AnswerOf<typeof budgetKeySchema>): number {
  if (body.period !== undefined) return budgetPeriods[body.period];
  if (body.period_seconds !== undefined) return body.period_seconds;
  throw invalidParameter('period', 'period must be hourly, daily, weekly or monthly, or give period_seconds (an integer of at least 60)');
}

/** Dollars without float noise (1e-10 is far below any real price difference). */
const roundDollars = (value: number): number => Math.round(value * 1e10) / 1e10;

/** `GET|PUT|DELETE /admin/budgets`; 503 `feature_unavailable` when budgets are off. */
export function registerBudgetRoutes(app: FastifyInstance, budgets: BudgetService | null): void {
  const feature = { enabled: budgets !== null, name: 'budgets', setting: 'BUDGETS_ENABLED (or USAGE_ENABLED)' };
  registerFeatureRoutes(app, feature, (scope) => defineBudgetRoutes(scope, budgets));
}
