import { providerError } from '../../errors/gateway-error.ts';
import { isRecord, type AnthropicUsage, type MessagesResponse, type ResponseBlock } from './wire.ts';

export interface ResponseOptions {
  /** Unix seconds stamped as `created` (Anthropic's answers carry no time). */
  created: number;
  /** The model asked for, used when the upstream names none. */
  model: string;
}

/**
 * Anthropic stop reasons as OpenAI finish reasons. `pause_turn` (a server tool paused the
 * turn) has no OpenAI equivalent and ends the turn like `end_turn`.
 */
export function mapFinishReason(stopReason: string | null | undefined): string {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * Anthropic usage in OpenAI's shape. Anthropic's `input_tokens` excludes cached tokens, so the
 * prompt is the sum of plain, cache-read and cache-written tokens; the parts are reported in
 * `prompt_tokens_details` and the upstream's object as `raw_usage`.
 */
export function convertUsage(usage: AnthropicUsage): Record<string, unknown> {
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  const promptTokens = count(usage.input_tokens) + cacheRead + cacheWrite;
  const completionTokens = count(usage.output_tokens);
  const converted: Record<string, unknown> = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: cacheWrite },
  };
  const thinking = usage.output_tokens_details?.thinking_tokens;
  if (typeof thinking === 'number') converted['completion_tokens_details'] = { reasoning_tokens: thinking };
  converted['raw_usage'] = usage;
  return converted;
}

/** A Messages answer as a chat completion: text joined, tool_use as tool_calls, thinking as reasoning_content. */
export function convertChatResponse(message: MessagesResponse, options: ResponseOptions): Record<string, unknown> {
  const text: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: Record<string, unknown>[] = [];
  for (const block of message.content) {
    if (block.type === 'text' && typeof block.text === 'string') text.push(block.text);
    else if (block.type === 'thinking' && typeof block.thinking === 'string') reasoning.push(block.thinking);
    else if (block.type === 'tool_use') toolCalls.push(toolCallOf(block));
  }
  const content = text.length === 0 && toolCalls.length > 0 ? null : text.join('');
  const chatMessage: Record<string, unknown> = { role: 'assistant', content };
  if (toolCalls.length > 0) chatMessage['tool_calls'] = toolCalls;
  if (reasoning.length > 0) chatMessage['reasoning_content'] = reasoning.join('');
  const choice: Record<string, unknown> = {
    index: 0,
    message: chatMessage,
    logprobs: null,
    finish_reason: mapFinishReason(message.stop_reason),
  };
  if (typeof message.stop_sequence === 'string') choice['stop_sequence'] = message.stop_sequence;
  return {
    id: message.id,
    object: 'chat.completion',
    created: options.created,
    model: message.model || options.model,
    choices: [choice],
    usage: convertUsage(message.usage),
  };
}

function toolCallOf(block: ResponseBlock): Record<string, unknown> {
  return {
    id: block.id ?? '',
    type: 'function',
    function: { name: block.name ?? '', arguments: JSON.stringify(isRecord(block.input) ? block.input : {}) },
  };
}

/** Reads a Messages answer; a body of another shape is the upstream's fault (502). */
export function parseMessagesResponse(text: string, provider: string): MessagesResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw providerError(`upstream ${provider} returned a body that is not JSON`, { provider, code: 'invalid_upstream_response' });
  }
  if (!isRecord(parsed) || !Array.isArray(parsed['content']) || parsed['type'] !== 'message') {
    throw providerError(`upstream ${provider} returned a body that is not an Anthropic message`, {
      provider,
      code: 'invalid_upstream_response',
    });
  }
  const blocks = (parsed['content'] as unknown[]).filter(isRecord) as unknown as ResponseBlock[];
  return {
    id: typeof parsed['id'] === 'string' ? parsed['id'] : '',
    type: 'message',
    role: 'assistant',
    model: typeof parsed['model'] === 'string' ? parsed['model'] : '',
    content: blocks,
    stop_reason: typeof parsed['stop_reason'] === 'string' ? parsed['stop_reason'] : null,
    stop_sequence: typeof parsed['stop_sequence'] === 'string' ? parsed['stop_sequence'] : null,
    usage: isRecord(parsed['usage']) ? (parsed['usage'] as AnthropicUsage) : {},
  };
}
