import { fold } from './fold.ts';
import type { Span, TextGuardrail } from './types.ts';

/**
 * The guardrail's matches in `text`, found on the look-alike-folded text and mapped back to
 * the original; sorted, overlaps dropped (the earlier, then the longer, wins).
 */
export function scan(guardrail: TextGuardrail, text: string): Span[] {
  const folded = fold(text);
  const found = guardrail.find(folded.text);
  if (found.length === 0) return found;
  const origin = folded.origin;
  const spans =
    origin === null
      ? found
      : found.map((span) => ({ start: origin[span.start] as number, end: (origin[span.end - 1] as number) + 1, entity: span.entity }));
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Span[] = [];
  let end = -1;
  for (const span of spans) {
    if (span.start < end) continue;
    kept.push(span);
    end = span.end;
  }
  return kept;
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
