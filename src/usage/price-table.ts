/** USD per million tokens. */
export interface ModelPrice {
  readonly inputPerMtok: number;
  readonly outputPerMtok: number;
  /** Price of cached prompt tokens; the input price when absent. */
  readonly cachedInputPerMtok?: number;
  /** Price of prompt tokens written to a cache; the input price when absent. */
  readonly cacheWritePerMtok?: number;
  /** Price of a million tokens trained by a fine-tuning job (`trained_tokens`); a job is unpriced when absent. */
  readonly trainingPerMtok?: number;
  /** Price of a second of generated video; a video is unpriced when absent. */
  readonly perSecond?: number;
}

const price = (inputPerMtok: number, outputPerMtok: number, cachedInputPerMtok?: number, cacheWritePerMtok?: number): ModelPrice => ({
  inputPerMtok,
  outputPerMtok,
  ...(cachedInputPerMtok === undefined ? {} : { cachedInputPerMtok }),
  ...(cacheWritePerMtok === undefined ? {} : { cacheWritePerMtok }),
});

/**
 * Built-in list prices of common models (standard tier, USD per million tokens; fine-tuning's
 * training tokens and video seconds where OpenAI lists them). Keys are
 * base model ids: dated snapshots (`gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`) and
 * `-latest` resolve to them. YAML `pricing:` overrides any entry.
 */
export const builtInPrices: ReadonlyMap<string, ModelPrice> = new Map([
  // OpenAI
  ['gpt-4o', { ...price(2.5, 10, 1.25), trainingPerMtok: 25 }],
  ['gpt-4o-mini', { ...price(0.15, 0.6, 0.075), trainingPerMtok: 3 }],
  ['gpt-4.1', { ...price(2, 8, 0.5), trainingPerMtok: 25 }],
  ['gpt-4.1-mini', { ...price(0.4, 1.6, 0.1), trainingPerMtok: 5 }],
  ['gpt-4.1-nano', { ...price(0.1, 0.4, 0.025), trainingPerMtok: 1.5 }],
  ['gpt-5', price(1.25, 10, 0.125)],
  ['gpt-5-mini', price(0.25, 2, 0.025)],
  ['gpt-5-nano', price(0.05, 0.4, 0.005)],
  ['gpt-4-turbo', price(10, 30)],
  ['gpt-3.5-turbo', { ...price(0.5, 1.5), trainingPerMtok: 8 }],
  ['gpt-35-turbo', price(0.5, 1.5)], // Azure OpenAI's model name of gpt-3.5-turbo
  ['o1', price(15, 60, 7.5)],
  ['o3', price(2, 8, 0.5)],
  ['o3-mini', price(1.1, 4.4, 0.55)],
  ['o4-mini', price(1.1, 4.4, 0.275)],
  // Videos are priced per second (the 720p sizes; the larger sizes of sora-2-pro cost more: price them in YAML).
  ['sora-2', { ...price(0, 0), perSecond: 0.1 }],
  ['sora-2-pro', { ...price(0, 0), perSecond: 0.3 }],
  ['text-embedding-3-small', price(0.02, 0)],
  ['text-embedding-3-large', price(0.13, 0)],
  ['text-embedding-ada-002', price(0.1, 0)],
  // Google Vertex AI embeddings (billed per 1000 characters: $0.000025, about $0.1 per million tokens)
  ['text-embedding-005', price(0.1, 0)],
  ['text-multilingual-embedding-002', price(0.1, 0)],
  // Anthropic
  ['claude-opus-4-5', price(5, 25, 0.5, 6.25)],
  ['claude-opus-4-1', price(15, 75, 1.5, 18.75)],
  ['claude-opus-4', price(15, 75, 1.5, 18.75)],
  ['claude-sonnet-4-5', price(3, 15, 0.3, 3.75)],
  ['claude-sonnet-4', price(3, 15, 0.3, 3.75)],
  ['claude-3-7-sonnet', price(3, 15, 0.3, 3.75)],
  ['claude-3-5-sonnet', price(3, 15, 0.3, 3.75)],
  ['claude-haiku-4-5', price(1, 5, 0.1, 1.25)],
  ['claude-3-5-haiku', price(0.8, 4, 0.08, 1)],
  ['claude-3-haiku', price(0.25, 1.25, 0.03, 0.3)],
  // Google
  ['gemini-2.5-pro', price(1.25, 10, 0.125)],
  ['gemini-2.5-flash', price(0.3, 2.5, 0.03)],
  ['gemini-2.5-flash-lite', price(0.1, 0.4, 0.01)],
  ['gemini-2.0-flash', price(0.1, 0.4, 0.025)],
  ['gemini-2.0-flash-lite', price(0.075, 0.3)],
  ['gemini-1.5-pro', price(1.25, 5)],
  ['gemini-1.5-flash', price(0.075, 0.3)],
  ['gemini-3-pro-preview', price(2, 12, 0.2)],
  ['gemini-3-flash-preview', price(0.5, 3, 0.05)],
  ['gemini-embedding-001', price(0.15, 0)],
  // AWS Bedrock (on-demand, us-east-1; a cross-region profile prefix such as `us.` resolves to these)
  ['anthropic.claude-sonnet-4-5-20250929-v1:0', price(3, 15, 0.3, 3.75)],
  ['anthropic.claude-sonnet-4-20250514-v1:0', price(3, 15, 0.3, 3.75)],
  ['anthropic.claude-3-7-sonnet-20250219-v1:0', price(3, 15, 0.3, 3.75)],
  ['anthropic.claude-3-5-sonnet-20241022-v2:0', price(3, 15, 0.3, 3.75)],
  ['anthropic.claude-3-5-sonnet-20240620-v1:0', price(3, 15)],
  ['anthropic.claude-haiku-4-5-20251001-v1:0', price(1, 5, 0.1, 1.25)],
  ['anthropic.claude-3-5-haiku-20241022-v1:0', price(0.8, 4, 0.08, 1)],
  ['anthropic.claude-3-haiku-20240307-v1:0', price(0.25, 1.25)],
  ['anthropic.claude-opus-4-1-20250805-v1:0', price(15, 75, 1.5, 18.75)],
  ['amazon.nova-premier-v1:0', price(2.5, 12.5)],
  ['amazon.nova-pro-v1:0', price(0.8, 3.2, 0.2)],
  ['amazon.nova-lite-v1:0', price(0.06, 0.24, 0.015)],
  ['amazon.nova-micro-v1:0', price(0.035, 0.14, 0.00875)],
  ['meta.llama3-3-70b-instruct-v1:0', price(0.72, 0.72)],
  ['meta.llama3-1-8b-instruct-v1:0', price(0.22, 0.22)],
  ['mistral.mistral-large-2402-v1:0', price(4, 12)],
  ['amazon.titan-embed-text-v2:0', price(0.02, 0)],
  ['amazon.titan-embed-text-v1', price(0.1, 0)],
  ['cohere.embed-english-v3', price(0.1, 0)],
  ['cohere.embed-multilingual-v3', price(0.1, 0)],
]);
