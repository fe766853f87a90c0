import { describe, expect, it } from 'vitest';
import { exceedsJsonDepth } from './json-depth.ts';

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

describe('exceedsJsonDepth', () => {
  it('counts arrays and objects up to the limit, not beyond', () => {
    expect(exceedsJsonDepth(nested(4), 4)).toBe(false);
    expect(exceedsJsonDepth(nested(5), 4)).toBe(true);
    expect(exceedsJsonDepth('{"a":{"b":[{"c":1}]}}', 4)).toBe(false);
    expect(exceedsJsonDepth('{"a":{"b":[{"c":[1]}]}}', 4)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(exceedsJsonDepth(JSON.stringify({ text: '[[[[[{{{{{' }), 2)).toBe(false);
    expect(exceedsJsonDepth(JSON.stringify({ text: 'say \\"[[[[[" and "{{{{' }), 2)).toBe(false);
    expect(exceedsJsonDepth(JSON.stringify(['\\', [[[1]]]]), 3)).toBe(true);
  });

  it('measures siblings separately', () => {
    expect(exceedsJsonDepth(`[${Array.from({ length: 1000 }, () => nested(3)).join(',')}]`, 4)).toBe(false);
  });

  it('handles 100,000 levels without recursion', () => {
    expect(exceedsJsonDepth(nested(100_000), 128)).toBe(true);
  });
});
