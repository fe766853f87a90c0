import { invalidParameter } from './admin-errors.ts';

const day = 86_400_000;
const dateOnly = /^\d{4}-\d{2}-\d{2}$/;

export interface TimeRange {
  /** Inclusive, epoch ms. */
  from: number;
  /** Exclusive, epoch ms. */
  to: number;
}

/**
 * `from`/`to` query values: ISO dates (`2026-11-01`: `to` then includes that whole day) or
 * date-times; the default is the last 30 days.
 */
export function parseTimeRange(query: Record<string, unknown>, now: number): TimeRange {
  const to = parseBound('to', query['to'], now, true);
  const from = parseBound('from', query['from'], to - 30 * day, false);
  if (from >= to) throw invalidParameter('from', '`from` must be before `to`');
  return { from, to };
}

function parseBound(name: string, value: unknown, fallback: number, isEnd: boolean): number {
  if (value === undefined || value === '') return fallback;
  if (typeof value !== 'string') throw invalidParameter(name, `\`${name}\` must be an ISO date`);
  const parsed = Date.parse(dateOnly.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(parsed))
    throw invalidParameter(name, `\`${name}\` must be an ISO date such as 2026-11-01, got ${JSON.stringify(value)}`);
  return dateOnly.test(value) && isEnd ? parsed + day : parsed;
}
