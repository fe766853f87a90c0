import type { UsageObject } from '../../streaming/chat-chunk.ts';

/** Usage as the Responses API reports it. */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);
const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** A chat completion's usage in the Responses shape (translated answers). */
export function responsesUsageOf(chat: UsageObject | null): ResponsesUsage | null {
  if (chat === null) return null;
  const input = count(chat['prompt_tokens']);
  const output = count(chat['completion_tokens']);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: count(record(chat['prompt_tokens_details'])['cached_tokens']) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: count(record(chat['completion_tokens_details'])['reasoning_tokens']) },
    total_tokens: count(chat['total_tokens']) || input + output,
  };
}

/**
 * A native Responses usage in the gateway's usage-record shape (SEED-SPEC usage object), so
 * cached input tokens are priced as such; the upstream's own object is kept as `raw_usage`.
 */
export function meteredUsageOf(usage: unknown): UsageObject | null {
  if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) return null;
  const raw = usage as Record<string, unknown>;
  const input = count(raw['input_tokens']);
  const output = count(raw['output_tokens']);
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: count(raw['total_tokens']) || input + output,
    prompt_tokens_details: { cached_tokens: count(record(raw['input_tokens_details'])['cached_tokens']) },
    completion_tokens_details: { reasoning_tokens: count(record(raw['output_tokens_details'])['reasoning_tokens']) },
    raw_usage: raw,
  };
}
