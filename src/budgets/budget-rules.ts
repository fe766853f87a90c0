import { budgetPeriodOf, type BudgetPeriod } from './periods.ts';

export interface BudgetRule {
  readonly userPath: string;
  readonly period: BudgetPeriod;
  readonly periodSeconds: number;
  /** USD. */
  readonly amount: number;
  readonly origin: 'config' | 'manual';
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Identity of a rule: lower-cased path and period length. */
export function budgetIdentity(userPath: string, periodSeconds: number): string {
  return `${userPath.toLowerCase()}|${periodSeconds}`;
}

export function makeBudgetRule(fields: Omit<BudgetRule, 'period'>): BudgetRule {
  return { ...fields, period: budgetPeriodOf(fields.periodSeconds) };
}
