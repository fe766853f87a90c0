/** Output tokens assumed for a request that names no cap (`max_tokens` and the like). */
export const defaultOutputCap = 4096;

/** A request's largest plausible size: prompt tokens (estimated) and output tokens (its cap, times its count). */
export interface TokenEstimate {
  readonly promptTokens: number;
  readonly outputTokens: number;
}

/**
 * The fields that cap one answer's output: OpenAI's and Anthropic's, Gemini's `maxOutputTokens`
 * (and its proto name `max_output_tokens`, which Google's JSON parser accepts too), Bedrock
 * Converse's `maxTokens`.
 */
const outputCapFields = ['max_completion_tokens', 'max_tokens', 'max_output_tokens', 'maxOutputTokens', 'maxTokens'] as const;
/**
 * The fields that ask for several answers to one prompt, each billed as output: `n` (chat,
 * completions, images), `best_of` (completions: generated server-side, billed even when
 * fewer are returned), Gemini's `candidateCount` (`candidate_count`). The largest one counts.
 */
const countFields = ['n', 'best_of', 'candidateCount', 'candidate_count'] as const;
/** Objects a provider nests those fields in: Gemini's `generationConfig` (either spelling), Bedrock's `inferenceConfig`. */
const nestedConfigs = ['generationConfig', 'generation_config', 'inferenceConfig', 'inference_config'] as const;

/** The largest count or cap an estimate takes (request-controlled numbers stay finite: a hold of Infinity would never be given back). */
const largest = 1e9;

/** A positive number, or a numeric string (multipart form fields); capped at `largest`. */
function positive(value: unknown): number | null {
  const number = typeof value === 'string' && /^\s*\d{1,16}(\.\d*)?\s*$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number > 0 ? Math.min(Math.ceil(number), largest) : null;
}

/**
 * The largest positive number any of `fields` holds, at the top of the body or in one of its
 * nested configurations; null when none does. The largest, not the first: whichever spelling
 * the provider reads, the estimate is never below it (fail closed).
 */
function largestOf(body: Readonly<Record<string, unknown>>, fields: readonly string[]): number | null {
  const holders: Readonly<Record<string, unknown>>[] = [body];
  for (const name of nestedConfigs) {
    const nested = body[name];
    if (typeof nested === 'object' && nested !== null && !Array.isArray(nested)) holders.push(nested as Record<string, unknown>);
  }
  let found: number | null = null;
  for (const holder of holders) {
    for (const field of fields) {
      const value = positive(holder[field]);
      if (value !== null && (found === null || value > found)) found = value;
    }
  }
  return found;
}

/**
 * How many answers the body asks for: the largest count field, at least 1, times the prompts
 * of a legacy completion (`prompt` as a list of strings or of token lists: one answer set each).
 */
export function answerCount(body: Readonly<Record<string, unknown>>): number {
  const count = largestOf(body, countFields) ?? 1;
  const prompt = body['prompt'];
  const prompts = Array.isArray(prompt) && prompt.some((item) => typeof item !== 'number') ? prompt.length : 1;
  return Math.min(count * Math.max(prompts, 1), largest);
}

/**
 * The token estimate a budget reservation is priced at: the prompt as its JSON size / 4
 * (about 4 bytes a token in English; generous for JSON punctuation), the output as the largest
 * cap the body names (`outputCapFields`, top level or nested), else `defaultOutputCap`, times
 * every answer it asks for (`n`, `best_of`, `candidateCount`: `answerCount`).
 */
export function estimateTokens(body: Readonly<Record<string, unknown>>): TokenEstimate {
  const outputTokens = Math.min((largestOf(body, outputCapFields) ?? defaultOutputCap) * answerCount(body), largest);
  return { promptTokens: Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4), outputTokens };
}
