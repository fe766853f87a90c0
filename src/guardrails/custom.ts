import { pathToFileURL } from 'node:url';
import type { GuardrailSettings } from './guardrail-settings.ts';
import type { CustomFinders } from './build.ts';
import type { Span } from './types.ts';

/**
 * Loads the modules of `custom` guardrails at start-up. A module exports
 * `find(text: string): Array<{start, end, entity}>` (the interface of the built-in text
 * guardrails; it must run in linear time); the guardrail's `action`, `on`, `mode` and
 * `replacement` apply to what it finds. A module that fails to load or lacks `find` stops
 * start-up with a message naming the guardrail.
 */
export async function loadCustomFinders(settings: readonly GuardrailSettings[]): Promise<CustomFinders> {
  const finders = new Map<string, (text: string) => Span[]>();
  for (const entry of settings) {
    if (entry.type !== 'custom' || finders.has(entry.module)) continue;
    let loaded: { find?: unknown; default?: { find?: unknown } };
    try {
      loaded = (await import(pathToFileURL(entry.module).href)) as typeof loaded;
    } catch (error) {
      throw new Error(`guardrail "${entry.name}": cannot load ${entry.module}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const find = loaded.find ?? loaded.default?.find;
    if (typeof find !== 'function') throw new Error(`guardrail "${entry.name}": ${entry.module} exports no find(text) function`);
    finders.set(entry.module, (text) => checkedSpans((find as (text: string) => unknown)(text), text.length, entry.name));
  }
  return finders;
}

/** What a module found, kept only when well-formed (a bad span would corrupt the redaction). */
function checkedSpans(found: unknown, length: number, name: string): Span[] {
  if (!Array.isArray(found)) throw new Error(`guardrail "${name}": find() returned no array`);
  return found.filter(
    (span: unknown): span is Span =>
      typeof span === 'object' &&
      span !== null &&
      Number.isInteger((span as Span).start) &&
      Number.isInteger((span as Span).end) &&
      (span as Span).start >= 0 &&
      (span as Span).start < (span as Span).end &&
      (span as Span).end <= length &&
      typeof (span as Span).entity === 'string',
  );
}
