import { describe, expect, it } from 'vitest';
import { mergeRateLimitHeaders } from './rejection.ts';

const trio = (kind: string, limit: number, remaining: number, reset: number): Record<string, string> => ({
  [`x-ratelimit-limit-${kind}`]: String(limit),
  [`x-ratelimit-remaining-${kind}`]: String(remaining),
  [`x-ratelimit-reset-${kind}`]: String(reset),
});

describe('mergeRateLimitHeaders', () => {
  it('returns the first part as it is when the second has no headers', () => {
    const first = trio('requests', 10, 9, 60);
    expect(mergeRateLimitHeaders(first, {})).toBe(first);
  });

  it('keeps each trio from the part with the least remaining, in the first part key order, new trios last', () => {
    const first = { ...trio('requests', 10, 9, 60) };
    const second = { ...trio('requests', 5, 2, 30), ...trio('tokens', 1000, 900, 60) };
    const merged = mergeRateLimitHeaders(first, second);
    expect(Object.entries(merged)).toEqual([
      ['x-ratelimit-limit-requests', '5'],
      ['x-ratelimit-remaining-requests', '2'],
      ['x-ratelimit-reset-requests', '30'],
      ['x-ratelimit-limit-tokens', '1000'],
      ['x-ratelimit-remaining-tokens', '900'],
      ['x-ratelimit-reset-tokens', '60'],
    ]);
    expect(first).toEqual(trio('requests', 10, 9, 60));
  });

  it('keeps the first part trio when it has less remaining', () => {
    const merged = mergeRateLimitHeaders(trio('requests', 10, 1, 60), trio('requests', 5, 2, 30));
    expect(merged).toEqual(trio('requests', 10, 1, 60));
  });
});
