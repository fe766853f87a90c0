import { patternFinder } from './pattern-scan.ts';
import type { Span } from './types.ts';

/**
 * Why a user pattern is refused at start-up or at PUT, or null: what RE2 cannot run (pattern-scan.ts),
 * and nested quantifiers, refused since before RE2 (kept so a configuration stays portable).
 */
export function unsafePattern(source: string): string | null {
  if (/\\[1-9]|\\k</.test(source)) return 'backreferences are not allowed';
  if (/\(\?<?[=!]/.test(source)) return 'lookarounds are not allowed';
  // A group that holds a quantifier or an alternation, itself quantified: (a+)+, (a|ab)*, (\w{2,})+.
  const groups: Array<{ quantified: boolean; alternation: boolean }> = [];
  for (let index = 0; index < source.length; index++) {
    const char = source[index];
    if (char === '\\') {
      index++;
      continue;
    }
    if (char === '[') {
      index = endOfClass(source, index);
      continue;
    }
    if (char === '(') groups.push({ quantified: false, alternation: false });
    else if (char === '|' && groups.length > 0) (groups[groups.length - 1] as { alternation: boolean }).alternation = true;
    else if (char === ')') {
      const group = groups.pop();
      const inner = group !== undefined && (group.quantified || group.alternation);
      if (inner && isQuantifier(source, index + 1))
        return 'nested quantifiers (a quantified group holding a quantifier or |) are not allowed';
      const parent = groups[groups.length - 1];
      if (parent !== undefined && (group?.quantified === true || isQuantifier(source, index + 1))) parent.quantified = true;
    } else if (isQuantifier(source, index) && groups.length > 0) (groups[groups.length - 1] as { quantified: boolean }).quantified = true;
  }
  return null;
}

function endOfClass(source: string, open: number): number {
  for (let index = open + 1; index < source.length; index++) {
    if (source[index] === '\\') index++;
    else if (source[index] === ']' && index > open + 1) return index;
  }
  return source.length;
}

function isQuantifier(source: string, index: number): boolean {
  const char = source[index];
  return char === '*' || char === '+' || char === '?' || (char === '{' && /^\{\d+(,\d*)?\}/.test(source.slice(index, index + 16)));
}

/**
 * Terms (case-insensitive, on the look-alike-folded text; escaped literals, so the built-in
 * engine scans them in linear time) and patterns, on RE2 (pattern-scan.ts). Compiled here, per
 * build, never in the frozen configuration: a global RegExp's `lastIndex` must stay writable.
 */
export function compileDenyList(terms: readonly string[], patterns: readonly string[]): DenyListFinder {
  const literal = terms.filter((term) => term !== '').map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const termPattern = literal.length === 0 ? null : new RegExp(literal.join('|'), 'gi');
  const finders = patterns.map((source) => patternFinder(source, 'pattern'));
  const termSpans = (text: string): Span[] => {
    const spans: Span[] = [];
    if (termPattern !== null) collect(termPattern, text, 'term', spans);
    return spans;
  };
  return {
    find: (text) => {
      const spans = termSpans(text);
      for (const finder of finders) finder.find(text, spans);
      return spans;
    },
    findAsync: async (text) => {
      const spans = termSpans(text);
      for (const finder of finders) await finder.findAsync(text, spans);
      return spans;
    },
  };
}

/** A deny list's finder, and the same letting the event loop run (request texts: pipeline.ts). */
export interface DenyListFinder {
  find(text: string): Span[];
  findAsync(text: string): Promise<Span[]>;
}

function collect(pattern: RegExp, text: string, entity: string, spans: Span[]): void {
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (match[0] === '') {
      pattern.lastIndex++;
      continue;
    }
    spans.push({ start: match.index, end: match.index + match[0].length, entity });
  }
}
