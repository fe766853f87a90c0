import { invalidRequest } from '../errors/gateway-error.ts';

/** How deep a JSON request body may nest arrays and objects (README "Bounds"). */
export const maximumJsonDepth = 128;

/**
 * Whether JSON text nests arrays and objects deeper than `limit`, by one pass over the text
 * without recursion (strings are skipped with `indexOf`). Text that is not JSON gives an
 * arbitrary answer; JSON.parse judges it afterwards.
 */
export function exceedsJsonDepth(text: string, limit: number): boolean {
  let depth = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === 34) {
      index = closingQuote(text, index);
      if (index === -1) return false;
    } else if (code === 123 || code === 91) {
      depth += 1;
      if (depth > limit) return true;
    } else if (code === 125 || code === 93) {
      depth -= 1;
    }
  }
  return false;
}

/**
 * Refuses JSON text nested deeper than `maximumJsonDepth` with a 400 `body_too_deep`: for the
 * request body, and for JSON the client sends inside a string (tool-call `arguments`) that the
 * gateway parses and serialises again (deeper values make JSON.stringify throw a RangeError).
 */
export function assertJsonDepth(text: string, what = 'request body', param?: string): void {
  if (!exceedsJsonDepth(text, maximumJsonDepth)) return;
  throw invalidRequest(`${what} nests arrays and objects deeper than ${maximumJsonDepth} levels`, {
    code: 'body_too_deep',
    ...(param === undefined ? {} : { param }),
  });
}

/** The index of the quote that closes the string opened at `open`, or -1. */
function closingQuote(text: string, open: number): number {
  let quote = text.indexOf('"', open + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 92) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    quote = text.indexOf('"', quote + 1);
  }
  return -1;
}
