import { describe, expect, it } from 'vitest';
import { countTokens, exactCountCharacters, loadTokenCounter } from './tokenizer.ts';

const prose = [
  'The quick brown fox jumps over the lazy dog; it was not amused. Numbers 1234567 and 3.14159 too.\n',
  'function add(a: number, b: number): number {\n  return a + b; // sum\n}\n',
  'Ça coûte 12,50 € — naïve façade, 東京で会いましょう。😀 Done.   Trailing spaces   \n\n',
].join('');

describe('countTokens', () => {
  it('counts ordinary text exactly as the tokenizer does', async () => {
    const count = await loadTokenCounter();
    const text = prose.repeat(40);
    expect(await countTokens([text])).toBe(count(text));
    expect(await countTokens([prose, prose])).toBe(2 * count(prose));
  });

  it('counts a 1 MB word with no separators: cut in pieces, the rest past the cap extrapolated', async () => {
    const count = await loadTokenCounter();
    const word = 'a'.repeat(1 << 20);
    const exact = (exactCountCharacters / 64) * count('a'.repeat(64)); // 8 tokens a piece: 1/8 token a byte
    expect(await countTokens([word])).toBe(exact + ((1 << 20) - exactCountCharacters) / 4); // at least 1/4 a byte
    const emoji = '😀'.repeat(1 << 17); // no piece splits a surrogate pair
    expect(await countTokens([emoji])).toBe((emoji.length / 64) * count('😀'.repeat(32)));
  });

  it('lets the event loop run while it counts a long text', async () => {
    let turns = 0;
    const tick = (): void => {
      turns++;
      if (turns < 1000) setImmediate(tick);
    };
    setImmediate(tick);
    let seed = 7;
    let text = '';
    while (text.length < 200_000) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      text += String.fromCharCode(0x4e00 + (seed % 20_000));
    }
    const tokens = await countTokens([text]);
    expect(tokens).toBeGreaterThan(text.length / 2);
    expect(turns).toBeGreaterThan(1);
  });

  it('stops once the total passes the limit', async () => {
    const tokens = await countTokens(['word '.repeat(1 << 18), 'more'], 100);
    expect(tokens).toBeGreaterThan(100);
    expect(tokens).toBeLessThanOrEqual(100 + 64);
  });
});
