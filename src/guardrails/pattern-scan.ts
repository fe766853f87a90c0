import { createRequire } from 'node:module';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RE2 } from 're2-wasm';
import type { Span } from './types.ts';

/**
 * Regular expressions from configuration and the admin API (`deny_list` patterns) run on RE2
 * (re2-wasm), whose time is linear in the text searched. re2-wasm copies the whole input into
 * WASM on every call, so a loop of `exec` over one long text would be quadratic in the number
 * of matches: the text is searched in windows instead, each no longer than `maxWindow`, that
 * start small after each match and double while nothing is found (ADR 29).
 */

/** The first window after a match; it doubles up to `maxWindow` while nothing is found. */
const firstWindow = 256;
/** A match ending this close to a window's end (not the text's) is searched again in a larger one. */
const confirmMargin = 128;
/** The largest window; a match longer than `maxMatchLength` may be found cut at its end. */
const maxWindow = 8192;
/** Windows that slide overlap by this much, so a match this long is never split. */
export const maxMatchLength = maxWindow / 2;
/** Matches searched for in one text; past this, the rest of the text counts as one match. */
export const maxPatternMatches = 1000;

let engine: typeof RE2 | null = null;

/**
 * re2-wasm, loaded on first use (it instantiates its WASM module, about 40 ms) and kept out of
 * the start-up bundle (it reads re2.wasm beside itself): only a configuration with patterns pays.
 */
function re2(): typeof RE2 {
  engine ??= (load('re2-wasm') as { RE2: typeof RE2 }).RE2;
  return engine;
}

const load = createRequire(import.meta.url);

/**
 * A fresh re2-wasm module, every expression compiled again on its next use. Its heap is fixed
 * at 16 MB: when expressions with many DFA states exhaust it, the module aborts and fails every
 * later call (ADR 29); the search that hit it fails closed and the next one starts over.
 */
export function resetPatternEngine(): void {
  engine = null;
  compiled.clear();
  for (const key of Object.keys(load.cache)) if (/[\\/]re2-wasm[\\/]/.test(key)) delete load.cache[key];
}

/** Compiled patterns by source: re2-wasm never frees one, so each source is compiled once. */
const compiled = new Map<string, RE2>();

function compile(source: string): RE2 {
  let pattern = compiled.get(source);
  if (pattern === undefined) {
    const RE2 = re2();
    pattern = new RE2(source, 'giu');
    compiled.set(source, pattern);
  }
  return pattern;
}

/** Why RE2 cannot run `source` (a backreference, a lookaround, bad syntax), or null. */
export function patternError(source: string): string | null {
  let pattern: RE2;
  try {
    pattern = compile(source);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return `RE2 cannot run it (${message.replace(/^Invalid regular expression: \/.*\/\w*: /s, '')}); backreferences and lookarounds are not supported`;
  }
  pattern.lastIndex = 0;
  if (pattern.test('')) return 'it matches the empty text';
  return null;
}

/** Finds the matches of one pattern in a text, into `spans`; `findAsync` lets the event loop run between windows. */
export interface PatternFinder {
  find(text: string, spans: Span[]): void;
  findAsync(text: string, spans: Span[]): Promise<void>;
}

/** Event-loop time an asynchronous search takes before it lets other work run. */
const sliceMilliseconds = 4;

/** A finder of `source`'s matches (case-insensitive), bounded as described above. */
export function patternFinder(source: string, entity: string): PatternFinder {
  compile(source); // outside the frozen configuration: `lastIndex` is set on each search
  return {
    find: (text, spans) => {
      for (const step of findAll(source, text, entity, spans)) void step;
    },
    findAsync: async (text, spans) => {
      let sliceStart = performance.now();
      for (const step of findAll(source, text, entity, spans)) {
        void step;
        if (performance.now() - sliceStart < sliceMilliseconds) continue;
        await nextTurn();
        sliceStart = performance.now();
      }
    },
  };
}

/** The search, one window a step (the caller may pause between steps). */
function* findAll(source: string, text: string, entity: string, spans: Span[]): Generator<void> {
  let position = 0;
  let window = firstWindow;
  // Each turn widens the window (at most 5 times in a row) or moves `position` forward.
  while (position < text.length) {
    const end = Math.min(text.length, position + window);
    let found: [number, number] | null;
    try {
      found = search(compile(source), text, position, end); // the current compiled one: see resetPatternEngine
    } catch {
      resetPatternEngine();
      spans.push({ start: position, end: text.length, entity }); // fails closed: the rest is one match
      return;
    }
    yield;
    if (found === null) {
      if (end === text.length) return;
      if (window < maxWindow) window *= 2;
      else position = end - maxMatchLength;
      continue;
    }
    const [start, stop] = found;
    if (stop > end - confirmMargin && end < text.length && window < maxWindow) {
      window *= 2; // the match ends near the window's end: it may be longer, or another may come first
      continue;
    }
    if (stop > end && start > position) {
      position = start; // the same search, from the match
      continue;
    }
    if (stop > start) spans.push({ start, end: stop, entity });
    position = stop > start ? stop : start + 1;
    window = firstWindow;
    if (spans.length >= maxPatternMatches && position < text.length) {
      spans.push({ start: position, end: text.length, entity });
      return;
    }
  }
}

/**
 * The first match of `pattern` starting in `[position, end)` of `text`, searched with one
 * character of context either side (so `\b`, `^` and `$` see the real neighbours): its start
 * and end in UTF-16 units, or null. A match may end one character past `end`.
 */
function search(pattern: RE2, text: string, position: number, end: number): [number, number] | null {
  const from = position === 0 ? 0 : position - unitsBefore(text, position);
  const to = end === text.length ? end : end + unitsAt(text, end);
  const slice = text.slice(from, to);
  pattern.lastIndex = from === position ? 0 : 1; // RE2 counts code points
  const match = pattern.exec(slice);
  if (match === null) return null;
  const start = from + unitOffset(slice, match.index);
  return [start, start + (match[0] ?? '').length];
}

/** UTF-16 units of the `codePoints` first code points of `text`. */
function unitOffset(text: string, codePoints: number): number {
  let units = 0;
  for (let count = 0; count < codePoints && units < text.length; count++) units += unitsAt(text, units);
  return units;
}

/** 2 for a surrogate pair at `index`, else 1. */
function unitsAt(text: string, index: number): number {
  const code = text.charCodeAt(index);
  const next = text.charCodeAt(index + 1);
  return code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
}

/** 2 when a surrogate pair ends just before `index`, else 1. */
function unitsBefore(text: string, index: number): number {
  return index >= 2 && unitsAt(text, index - 2) === 2 ? 2 : 1;
}
