import { setImmediate as nextTurn } from 'node:timers/promises';

/** Counts the tokens of a text. */
export type TokenCounter = (text: string) => number;

let counter: Promise<TokenCounter> | null = null;

/**
 * The o200k_base tokenizer (`gpt-tokenizer`), loaded once, on first use: it takes most of a
 * second to load, so start-up does not pay for it unless a feature that counts is configured.
 * Its byte-pair merge is quadratic in the length of a word: count with `countTokens`, which
 * never hands it more than `pieceLength` characters at once.
 */
export function loadTokenCounter(): Promise<TokenCounter> {
  counter ??= import('gpt-tokenizer/encoding/o200k_base').then((module) => module.countTokens as TokenCounter);
  return counter;
}

/** Characters of one request counted with the tokenizer; the rest is extrapolated (README). */
export const exactCountCharacters = 262_144;
/** Longest piece handed to the tokenizer: words are cut, so the work is linear in the text. */
const pieceLength = 64;
/** Event-loop time one count takes before it lets other work run. */
const sliceMilliseconds = 4;
/** Tokens per UTF-8 byte assumed at least for the extrapolated rest (about 4 bytes a token). */
const minimumTokensPerByte = 0.25;

/**
 * The tokens of `texts` (o200k_base), in time linear in their length and off the event loop
 * in slices: each text is cut into pieces of at most 64 characters at word starts (long words
 * and runs of spaces at 64), the first `exactCountCharacters` are counted, and the rest is
 * estimated at the tokens per UTF-8 byte counted so far (at least one token per 4 bytes).
 * Counting stops early once the total passes `limit`.
 */
export async function countTokens(texts: Iterable<string>, limit = Number.POSITIVE_INFINITY): Promise<number> {
  const count = await loadTokenCounter();
  let tokens = 0;
  let counted = 0; // characters
  let countedBytes = 0;
  let restBytes = 0;
  let sliceStart = performance.now();
  for (const text of texts) {
    let at = 0;
    while (at < text.length && counted < exactCountCharacters) {
      if (tokens > limit) return tokens;
      const end = pieceEnd(text, at);
      const piece = text.slice(at, end);
      tokens += count(piece);
      counted += piece.length;
      countedBytes += Buffer.byteLength(piece);
      at = end;
      if (performance.now() - sliceStart >= sliceMilliseconds) {
        await nextTurn();
        sliceStart = performance.now();
      }
    }
    if (at < text.length) restBytes += Buffer.byteLength(at === 0 ? text : text.slice(at));
  }
  if (restBytes === 0) return tokens;
  const perByte = Math.max(minimumTokensPerByte, countedBytes === 0 ? 0 : tokens / countedBytes);
  return tokens + Math.ceil(restBytes * perByte);
}

/**
 * Where the piece of `text` that starts at `start` ends: at most `pieceLength` characters on,
 * before the last space that starts a word (the tokenizer keeps " word" together), else there
 * (never inside a surrogate pair).
 */
function pieceEnd(text: string, start: number): number {
  const limit = start + pieceLength;
  if (limit >= text.length) return text.length;
  for (let at = limit - 1; at > start; at--) if (isSpace(text.charCodeAt(at)) && !isSpace(text.charCodeAt(at + 1))) return at;
  const code = text.charCodeAt(limit - 1);
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
}

function isSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x3000;
}
