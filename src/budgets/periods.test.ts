import { describe, expect, it } from 'vitest';
import { budgetPeriodOf, periodWindow } from './periods.ts';

const at = (iso: string): number => Date.parse(iso);
const window = (seconds: number, iso: string) => {
  const { start, end } = periodWindow(seconds, at(iso));
  return [new Date(start).toISOString(), new Date(end).toISOString()];
};

describe('periodWindow', () => {
  it('aligns hours and days to UTC', () => {
    expect(window(3600, '2026-11-21T22:15:00Z')).toEqual(['2026-11-21T22:00:00.000Z', '2026-11-21T23:00:00.000Z']);
    expect(window(86400, '2026-11-21T22:15:00Z')).toEqual(['2026-11-21T00:00:00.000Z', '2026-11-22T00:00:00.000Z']);
  });

  it('starts weeks on Monday', () => {
    // 2026-11-21 is a Saturday; 2026-11-23 a Monday.
    expect(window(604800, '2026-11-21T10:00:00Z')).toEqual(['2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z']);
    expect(window(604800, '2026-11-23T00:00:00Z')).toEqual(['2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z']);
  });

  it('uses calendar months, February and year ends included', () => {
    expect(window(2592000, '2028-02-29T23:59:59Z')).toEqual(['2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z']);
    expect(window(2592000, '2026-12-31T12:00:00Z')).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
  });

  it('aligns custom lengths to the epoch', () => {
    expect(window(600, '2026-11-21T22:15:00Z')).toEqual(['2026-11-21T22:10:00.000Z', '2026-11-21T22:20:00.000Z']);
  });

  it('names periods by their length', () => {
    expect([budgetPeriodOf(3600), budgetPeriodOf(2592000), budgetPeriodOf(42)]).toEqual(['hourly', 'monthly', 'custom']);
  });
});
