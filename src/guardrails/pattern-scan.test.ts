import { describe, expect, it } from 'vitest';
import { maxMatchLength, maxPatternMatches, patternError, patternFinder } from './pattern-scan.ts';
import type { Span } from './types.ts';

const spansOf = (source: string, text: string): Span[] => {
  const spans: Span[] = [];
  patternFinder(source, 'pattern').find(text, spans);
  return spans;
};

/** What the built-in engine finds on the whole text (the reference for short matches). */
const reference = (source: string, text: string): Span[] =>
  [...text.matchAll(new RegExp(source, 'giu'))]
    .filter((match) => match[0] !== '')
    .map((match) => ({ start: match.index, end: match.index + match[0].length, entity: 'pattern' }));

/** A deterministic text of words, digits, emoji (surrogate pairs) and spaces. */
function mixedText(length: number, seed: number): string {
  const pieces = ['ticket-', '1234', '98765', ' ', 'a.b', 'x', '😀', 'é', '@', 'mail.com', '\n', 'TICKET-', '42'];
  let state = seed;
  let text = '';
  while (text.length < length) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    text += pieces[state % pieces.length];
  }
  return text;
}

describe('deny_list patterns on RE2', () => {
  it('finds what the built-in engine finds, across window edges and surrogate pairs', () => {
    const patterns = ['\\bticket-\\d{4,8}\\b', '\\S+@\\S+\\.com', 'a\\.b', '9876\\d+', '😀+é', '^ticket', 'x$'];
    for (const seed of [1, 2, 3]) {
      const text = mixedText(40_000, seed);
      for (const pattern of patterns) expect(spansOf(pattern, text), `${pattern} seed ${seed}`).toEqual(reference(pattern, text));
    }
  });

  it('sees the real neighbours of a window: no \\b or ^ invented at its edges', () => {
    for (const at of [255, 256, 257, 511, 512, 4095, 4096, 8191, 8192]) {
      const inside = `${'x'.repeat(at)}ticket-1234 ticket`;
      expect(spansOf('\\bticket-\\d{4}\\b', inside), String(at)).toEqual([]);
      expect(spansOf('^ticket', inside), String(at)).toEqual([]);
      const apart = `${'x '.repeat(at)}ticket-1234 `;
      expect(spansOf('\\bticket-\\d{4}\\b', apart)).toEqual([{ start: at * 2, end: at * 2 + 11, entity: 'pattern' }]);
    }
  });

  it('answers a 1 MB near miss (one word, no @) with no match, and finds the match at its end', () => {
    const word = 'a'.repeat(1 << 20);
    expect(spansOf('\\S+@\\S+\\.com', word)).toEqual([]);
    expect(spansOf('\\bticket-\\d{4,8}\\b', 'ticket-'.repeat(149_796))).toEqual([]);
    const found = spansOf('\\S+@\\S+\\.com', `${word}@x.com`);
    expect(found).toHaveLength(1);
    expect(found[0]?.end).toBe(word.length + 6);
    expect(word.length - (found[0]?.start ?? 0)).toBeGreaterThanOrEqual(maxMatchLength); // cut, not lost
  });

  it('bounds the matches of one text: past the cap, the rest counts as one match (fails closed)', () => {
    const text = '1 '.repeat(1 << 19);
    const spans = spansOf('\\d', text);
    expect(spans).toHaveLength(maxPatternMatches + 1);
    expect(spans.at(-2)).toEqual({ start: (maxPatternMatches - 1) * 2, end: (maxPatternMatches - 1) * 2 + 1, entity: 'pattern' });
    expect(spans.at(-1)).toEqual({ start: (maxPatternMatches - 1) * 2 + 1, end: text.length, entity: 'pattern' });
  });

  it('searches asynchronously with the same result, letting the event loop run', async () => {
    let turns = 0;
    const tick = (): void => {
      turns++;
      if (turns < 10_000) setImmediate(tick);
    };
    setImmediate(tick);
    const text = `${'a'.repeat(1 << 20)}@x.com ${mixedText(20_000, 4)}`;
    const spans: Span[] = [];
    await patternFinder('\\S+@\\S+\\.com', 'pattern').findAsync(text, spans);
    expect(spans).toEqual(spansOf('\\S+@\\S+\\.com', text));
    expect(turns).toBeGreaterThan(1);
  });

  it('survives expressions that exhaust re2-wasm heap: that search fails closed, the next ones run', () => {
    let text = '';
    let seed = 1;
    for (let index = 0; index < 40_000; index++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      text += (seed >>> 16) & 1 ? 'a' : 'b';
    }
    // Many DFA states each (ADR 29): together they outgrow the fixed 16 MB heap.
    const finders = Array.from({ length: 16 }, (_, index) => patternFinder(`(?:a|b)*a(?:a|b){${20 + index}}c`, 'pattern'));
    const found = finders.map((finder) => {
      const spans: Span[] = [];
      finder.find(text, spans); // no "c": nothing to find, unless the search failed closed
      return spans;
    });
    for (const spans of found) expect(spans.length === 0 || (spans.length === 1 && spans[0]?.end === text.length)).toBe(true);
    expect(spansOf('b{3}c', 'xxbbbc')).toEqual([{ start: 2, end: 6, entity: 'pattern' }]);
    expect(spansOf('a', 'ba')).toEqual([{ start: 1, end: 2, entity: 'pattern' }]);
  }, 60_000);

  it('refuses what RE2 cannot run and patterns that match the empty text, with a reason', () => {
    expect(patternError('(a)\\1')).toMatch(/RE2 cannot run it.*backreferences and lookarounds/);
    expect(patternError('(?<=a)b')).toMatch(/RE2 cannot run it/);
    expect(patternError('x*')).toBe('it matches the empty text');
    expect(patternError('\\S+@\\S+\\.com')).toBeNull();
  });
});
