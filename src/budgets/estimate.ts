/** Output tokens assumed for a request that names no cap (`max_tokens` and the like). */
export const defaultOutputCap = 4096;

/** A request's largest plausible size: prompt tokens (estimated) and output tokens (its cap). */
export interface TokenEstimate {
  readonly promptTokens: number;
  readonly outputTokens: number;
}

const outputCapFields = ['max_completion_tokens', 'max_tokens', 'max_output_tokens'] as const;

/**
 * The token estimate a budget reservation is priced at: the prompt as its JSON size / 4
 * (about 4 bytes a token in English; generous for JSON punctuation), the output as the first
 * cap the body names (`max_completion_tokens`, `max_tokens`, `max_output_tokens`), else
 * `defaultOutputCap`.
 */
export function estimateTokens(body: Readonly<Record<string, unknown>>): TokenEstimate {
  let outputTokens = defaultOutputCap;
  for (const field of outputCapFields) {
    const value = body[field];
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) {
      outputTokens = Math.ceil(value);
      break;
    }
  }
  return { promptTokens: Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4), outputTokens };
}
