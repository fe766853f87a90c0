/** Output tokens assumed for a request that names no cap (`max_tokens` and the like). */
export const defaultOutputCap = 4096;

/** A request's largest plausible size: prompt tokens (estimated) and output tokens (its cap, times its count). */
export interface TokenEstimate {
  readonly promptTokens: number;
  readonly outputTokens: number;
}

const outputCapFields = ['max_completion_tokens', 'max_tokens', 'max_output_tokens', 'maxOutputTokens'] as const;
/**
 * The fields that ask for several answers to one prompt, each billed as output: `n` (chat,
 * completions, images), `best_of` (completions: generated server-side, billed even when
 * fewer are returned), Gemini's `candidateCount`. The largest one counts.
 */
const countFields = ['n', 'best_of', 'candidateCount'] as const;

/** The largest count or cap an estimate takes (request-controlled numbers stay finite: a hold of Infinity would never be given back). */
const largest = 1e9;

/** A positive number, or a numeric string (multipart form fields); capped at `largest`. */
function positive(value: unknown): number | null {
  const number = typeof value === 'string' && /^\s*\d{1,16}(\.\d*)?\s*$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number > 0 ? Math.min(Math.ceil(number), largest) : null;
}

/** The first of `fields` the body (or Gemini's `generationConfig` in it) names as a positive number. */
function firstOf(body: Readonly<Record<string, unknown>>, fields: readonly string[]): number | null {
  const config = body['generationConfig'];
  const nested = typeof config === 'object' && config !== null && !Array.isArray(config) ? (config as Record<string, unknown>) : null;
  for (const field of fields) {
    const value = positive(body[field]) ?? (nested === null ? null : positive(nested[field]));
    if (value !== null) return value;
  }
  return null;
}

/**
 * How many answers the body asks for: the largest count field, at least 1, times the prompts
 * of a legacy completion (`prompt` as a list of strings or of token lists: one answer set each).
 */
export function answerCount(body: Readonly<Record<string, unknown>>): number {
  let count = 1;
  for (const field of countFields) count = Math.max(count, firstOf(body, [field]) ?? 1);
  const prompt = body['prompt'];
  const prompts = Array.isArray(prompt) && prompt.some((item) => typeof item !== 'number') ? prompt.length : 1;
  return Math.min(count * Math.max(prompts, 1), largest);
}

/**
 * The token estimate a budget reservation is priced at: the prompt as its JSON size / 4
 * (about 4 bytes a token in English; generous for JSON punctuation), the output as the first
 * cap the body names (`max_completion_tokens`, `max_tokens`, `max_output_tokens`, Gemini's
 * `maxOutputTokens`), else `defaultOutputCap`, times every answer it asks for (`n`,
 * `best_of`, `candidateCount`: `answerCount`).
 */
export function estimateTokens(body: Readonly<Record<string, unknown>>): TokenEstimate {
  const outputTokens = Math.min((firstOf(body, outputCapFields) ?? defaultOutputCap) * answerCount(body), largest);
  return { promptTokens: Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4), outputTokens };
}
