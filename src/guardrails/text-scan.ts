import { fold, isAscii } from './fold.ts';
import type { Span, TextGuardrail } from './types.ts';

/**
 * The guardrail's matches in `text`, found on the look-alike-folded text and mapped back to
 * the original; sorted, overlaps dropped (the earlier, then the longer, wins).
 */
export function scan(guardrail: TextGuardrail, text: string): Span[] {
  if (isAscii(text)) return kept(guardrail.find(text)); // folding changes nothing
  const folded = fold(text);
  return mapped(guardrail.find(folded.text), folded.origin);
}

/** `scan` with the guardrail's `findAsync` when it has one (the event loop runs meanwhile). */
export async function scanAsync(guardrail: TextGuardrail, text: string): Promise<Span[]> {
  const findAsync = guardrail.findAsync;
  if (findAsync === undefined) return scan(guardrail, text);
  if (isAscii(text)) return kept(await findAsync(text));
  const folded = fold(text);
  return mapped(await findAsync(folded.text), folded.origin);
}

/** Spans found on the folded text, on the original one. */
function mapped(found: Span[], origin: ReturnType<typeof fold>['origin']): Span[] {
  if (found.length === 0 || origin === null) return kept(found);
  return kept(
    found.map((span) => ({ start: origin[span.start] as number, end: (origin[span.end - 1] as number) + 1, entity: span.entity })),
  );
}

/** Shorter than this, spans are sorted in place by insertion (Array.prototype.sort allocates a work copy). */
const insertionSortLength = 16;

/** `spans` (the finder's own array) sorted by start, longer first, stable; overlapping ones dropped, in place. */
function kept(spans: Span[]): Span[] {
  if (spans.length < 2) return spans;
  if (spans.length < insertionSortLength) insertionSort(spans);
  else spans.sort(byStartLongerFirst);
  let length = 0;
  let end = -1;
  for (const span of spans) {
    if (span.start < end) continue;
    spans[length++] = span;
    end = span.end;
  }
  spans.length = length;
  return spans;
}

function byStartLongerFirst(a: Span, b: Span): number {
  return a.start - b.start || b.end - a.end;
}

function insertionSort(spans: Span[]): void {
  for (let index = 1; index < spans.length; index++) {
    const span = spans[index] as Span;
    let at = index;
    while (at > 0 && byStartLongerFirst(spans[at - 1] as Span, span) > 0) {
      spans[at] = spans[at - 1] as Span;
      at--;
    }
    spans[at] = span;
  }
}

/** `text` with each span replaced by the guardrail's replacement for its entity. */
export function redact(guardrail: TextGuardrail, text: string, spans: readonly Span[]): string {
  let result = '';
  let at = 0;
  for (const span of spans) {
    result += text.slice(at, span.start) + guardrail.replacement(span.entity);
    at = span.end;
  }
  return result + text.slice(at);
}
