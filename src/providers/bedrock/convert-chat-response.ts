import { providerError } from '../../errors/gateway-error.ts';
import { isRecord, type ContentBlock, type ConverseResponse, type ConverseUsage } from './wire.ts';

export interface ResponseOptions {
  /** The completion id (from the upstream's request id). */
  id: string;
  /** Unix seconds stamped as `created`. */
  created: number;
  /** The model asked for (Converse answers do not name it). */
  model: string;
}

/** Converse stop reasons as OpenAI finish reasons. */
export function mapStopReason(stopReason: unknown): string {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop'; // end_turn, stop_sequence
  }
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * Converse usage in OpenAI's shape. `inputTokens` excludes cache reads and writes, so the
 * prompt is their sum; the parts go to `prompt_tokens_details`, the upstream's object to
 * `raw_usage`.
 */
export function convertUsage(usage: ConverseUsage): Record<string, unknown> {
  const cacheRead = count(usage.cacheReadInputTokens);
  const cacheWrite = count(usage.cacheWriteInputTokens);
  const promptTokens = count(usage.inputTokens) + cacheRead + cacheWrite;
  const completionTokens = count(usage.outputTokens);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: cacheWrite },
    raw_usage: usage,
  };
}

/** Reads a Converse answer; anything without `output.message.content` is an unreadable answer (502). */
export function parseConverseResponse(text: string, provider: string): ConverseResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  const output = isRecord(parsed) ? parsed['output'] : undefined;
  const message = isRecord(output) ? output['message'] : undefined;
  if (!isRecord(parsed) || !isRecord(message) || !Array.isArray(message['content'])) {
    throw providerError(`upstream ${provider} returned an unreadable Converse answer`, { provider, code: 'invalid_upstream_response' });
  }
  return { ...parsed, usage: isRecord(parsed['usage']) ? parsed['usage'] : {} } as unknown as ConverseResponse;
}

/** A Converse answer as a chat completion: text joined, toolUse as tool_calls, reasoning as reasoning_content. */
export function convertChatResponse(response: ConverseResponse, options: ResponseOptions): Record<string, unknown> {
  const text: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: Record<string, unknown>[] = [];
  for (const block of response.output.message.content as ContentBlock[]) {
    if (typeof block.text === 'string') text.push(block.text);
    else if (typeof block.reasoningContent?.reasoningText?.text === 'string') reasoning.push(block.reasoningContent.reasoningText.text);
    else if (block.toolUse !== undefined) {
      const { toolUseId, name, input } = block.toolUse;
      toolCalls.push({ id: toolUseId, type: 'function', function: { name, arguments: JSON.stringify(input ?? {}) } });
    }
  }
  const message: Record<string, unknown> = { role: 'assistant', content: text.length > 0 ? text.join('') : null, refusal: null };
  if (reasoning.length > 0) message['reasoning_content'] = reasoning.join('');
  if (toolCalls.length > 0) message['tool_calls'] = toolCalls;
  return {
    id: options.id,
    object: 'chat.completion',
    created: options.created,
    model: options.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: mapStopReason(response.stopReason) }],
    usage: convertUsage(response.usage),
  };
}
