import { describe, expect, it } from 'vitest';
import { boundedDistance, closestNames, didYouMean } from './closest-names.ts';

describe('closestNames', () => {
  it('finds the names a typo is closest to, nearest first', () => {
    expect(closestNames('rate_limit', ['rate_limits', 'budgets', 'request_log'])).toEqual(['rate_limits']);
    expect(closestNames('gpt-4', ['openai/gpt-4o', 'gpt-4o', 'gpt-4o-mini', 'claude'])).toEqual(['gpt-4o']);
    expect(closestNames('modles', ['models', 'api_key', 'base_url'])).toEqual(['models']);
    expect(closestNames('zzz', ['models', 'api_key'])).toEqual([]);
    expect(didYouMean(['a', 'b'])).toBe(' (did you mean "a" or "b"?)');
    expect(didYouMean([])).toBe('');
  });

  it('computes the Levenshtein distance within its bound', () => {
    expect(boundedDistance('kitten', 'sitting', 3)).toBe(3);
    expect(boundedDistance('kitten', 'sitting', 2)).toBe(3);
    expect(boundedDistance('abc', 'abc', 0)).toBe(0);
    expect(boundedDistance('', 'ab', 2)).toBe(2);
  });

  it('bounds its work: long names are cut and only the first candidates are looked at', () => {
    const long = 'x'.repeat(100_000);
    const candidates = Array.from({ length: 100_000 }, (_unused, index) => `${'x'.repeat(64)}-${index}`);
    const started = performance.now();
    expect(closestNames(long, candidates)).toHaveLength(3);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(closestNames('model-99999', candidates.concat(['model-99998']), { maxCandidates: 10 })).toEqual([]);
  });
});
