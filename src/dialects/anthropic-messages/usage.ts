import type { UsageObject } from '../../streaming/chat-chunk.ts';
import { isObject, type JsonObject } from './wire.ts';

/**
 * Usage as a native Messages answer reports it, in the OpenAI shape metering and pricing
 * read (readTokenCounts). Anthropic's `input_tokens` excludes the prompt's cache reads and
 * writes, so the prompt is the sum of the three; reads and writes go to
 * `prompt_tokens_details` (`cached_tokens`, `cache_write_tokens`) to be priced at their
 * rates, and the upstream's object is kept as `raw_usage`.
 */
export function meteredUsage(usage: JsonObject): UsageObject {
  const cacheRead = count(usage['cache_read_input_tokens']);
  const cacheWrite = count(usage['cache_creation_input_tokens']);
  const promptTokens = count(usage['input_tokens']) + cacheRead + cacheWrite;
  const completionTokens = count(usage['output_tokens']);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: cacheWrite },
    raw_usage: usage,
  };
}

/** `message_delta` usage is cumulative: its non-null counts replace `message_start`'s. */
export function mergeUsage(base: JsonObject | null, update: unknown): JsonObject | null {
  if (!isObject(update)) return base;
  const merged: JsonObject = { ...base };
  for (const [key, value] of Object.entries(update)) if (value !== null || !(key in merged)) merged[key] = value;
  return merged;
}

/** The usage of a native Messages JSON answer, or null when it has none. */
export function usageOfMessage(message: JsonObject): UsageObject | null {
  return isObject(message['usage']) ? meteredUsage(message['usage']) : null;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
