/** Budget periods (CONTRACT section 7). `monthly` is the calendar month in UTC. */
export const budgetPeriods = { hourly: 3600, daily: 86_400, weekly: 604_800, monthly: 2_592_000 } as const;

export type NamedBudgetPeriod = keyof typeof budgetPeriods;
export type BudgetPeriod = NamedBudgetPeriod | 'custom';

export function isNamedBudgetPeriod(value: string): value is NamedBudgetPeriod {
  return Object.hasOwn(budgetPeriods, value);
}

/** The period a rule's `period_seconds` stands for: a named one when it matches one. */
export function budgetPeriodOf(periodSeconds: number): BudgetPeriod {
  const named = (Object.keys(budgetPeriods) as NamedBudgetPeriod[]).find((name) => budgetPeriods[name] === periodSeconds);
  return named ?? 'custom';
}

export interface PeriodWindow {
  /** Epoch ms, inclusive. */
  start: number;
  /** Epoch ms, exclusive. */
  end: number;
}

const hour = 3_600_000;
const day = 86_400_000;

/**
 * The window containing `now`: UTC hours, days, weeks from Monday, calendar months; custom
 * lengths are aligned to the Unix epoch.
 */
export function periodWindow(periodSeconds: number, now: number): PeriodWindow {
  const period = budgetPeriodOf(periodSeconds);
  if (period === 'hourly') return aligned(now, hour);
  if (period === 'daily') return aligned(now, day);
  if (period === 'weekly') {
    // 1970-01-01 was a Thursday; Monday-aligned weeks start four days later.
    const offset = 4 * day;
    const start = Math.floor((now - offset) / (7 * day)) * 7 * day + offset;
    return { start, end: start + 7 * day };
  }
  if (period === 'monthly') {
    const date = new Date(now);
    return {
      start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1),
      end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1),
    };
  }
  return aligned(now, periodSeconds * 1000);
}

function aligned(now: number, length: number): PeriodWindow {
  const start = Math.floor(now / length) * length;
  return { start, end: start + length };
}
