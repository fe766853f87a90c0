import { providerError } from '../../errors/gateway-error.ts';
import {
  isObject,
  messageIdFor,
  type ContentBlock,
  type JsonObject,
  type MessagesResponse,
  type MessagesUsage,
  type StopReason,
} from './wire.ts';

/**
 * OpenAI `finish_reason` -> Anthropic `stop_reason`. A content filter is Anthropic's
 * `refusal`; a turn that produced tool calls is `tool_use` whatever the upstream said.
 */
export function stopReasonOf(finishReason: unknown, hasToolUse: boolean, stopSequence: string | null): StopReason {
  if (hasToolUse) return 'tool_use';
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return stopSequence === null ? 'end_turn' : 'stop_sequence';
  }
}

/**
 * OpenAI usage -> Anthropic usage. OpenAI's `prompt_tokens` includes cached tokens while
 * Anthropic's `input_tokens` excludes cache reads and writes, so those are taken out.
 */
export function toMessagesUsage(usage: unknown, fallbackInputTokens = 0): MessagesUsage {
  if (!isObject(usage))
    return { input_tokens: fallbackInputTokens, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  const details = isObject(usage['prompt_tokens_details']) ? usage['prompt_tokens_details'] : {};
  const cacheRead = count(usage['cache_read_input_tokens'] ?? details['cached_tokens']);
  const cacheCreation = count(usage['cache_creation_input_tokens'] ?? details['cache_write_tokens'] ?? details['cache_creation_tokens']);
  return {
    input_tokens: Math.max(0, count(usage['prompt_tokens']) - cacheRead - cacheCreation),
    output_tokens: count(usage['completion_tokens']),
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheCreation,
  };
}

/** A chat completion (JSON text, already checked by the pipeline) as a Messages response. */
export function toMessagesResponse(chatJson: string, fallbackModel: string, fallbackId: string): MessagesResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(chatJson);
  } catch {
    parsed = null;
  }
  const choice = isObject(parsed) && Array.isArray(parsed['choices']) ? (parsed['choices'][0] as unknown) : undefined;
  if (!isObject(parsed) || !isObject(choice)) {
    throw providerError('the upstream answer has no choice to translate', { code: 'invalid_upstream_response' });
  }
  const message = isObject(choice['message']) ? choice['message'] : {};
  const content = contentOf(message);
  const hasToolUse = content.some((block) => block.type === 'tool_use');
  const stopSequence = stopSequenceOf(choice);
  const refused = typeof message['refusal'] === 'string' && message['refusal'] !== '';
  const stopReason = refused && !hasToolUse ? 'refusal' : stopReasonOf(choice['finish_reason'], hasToolUse, stopSequence);
  return {
    id: messageIdFor(parsed['id'], fallbackId),
    type: 'message',
    role: 'assistant',
    model: typeof parsed['model'] === 'string' && parsed['model'] !== '' ? parsed['model'] : fallbackModel,
    content,
    stop_reason: stopReason,
    stop_sequence: stopReason === 'stop_sequence' ? stopSequence : null,
    usage: toMessagesUsage(parsed['usage']),
  };
}

/** Reasoning, text (or the refusal text) and tool calls of a chat message, in that order. */
function contentOf(message: JsonObject): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  const reasoning = message['reasoning_content'] ?? message['reasoning'];
  if (typeof reasoning === 'string' && reasoning !== '') blocks.push({ type: 'thinking', thinking: reasoning, signature: '' });
  const content = message['content'];
  if (typeof content === 'string' && content !== '') blocks.push({ type: 'text', text: content });
  else if (Array.isArray(content)) {
    for (const part of content as unknown[]) {
      const text = isObject(part) && (part['type'] === 'text' || part['type'] === 'output_text') ? part['text'] : undefined;
      if (typeof text === 'string' && text !== '') blocks.push({ type: 'text', text });
    }
  }
  const refusal = message['refusal'];
  const hasText = blocks.some((block) => block.type === 'text');
  if (!hasText && typeof refusal === 'string' && refusal !== '') {
    blocks.push({ type: 'text', text: refusal });
  }
  const toolCalls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : [];
  toolCalls.forEach((call, index) => {
    const fn = isObject(call) && isObject(call['function']) ? call['function'] : null;
    if (fn === null || !isObject(call)) return;
    const id = typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : `toolu_${index}`;
    blocks.push({ type: 'tool_use', id, name: typeof fn['name'] === 'string' ? fn['name'] : '', input: toolInput(fn['arguments']) });
  });
  return blocks;
}

/** Tool arguments (a JSON text in OpenAI's shape) as the input object Anthropic clients expect. */
export function toolInput(argumentsText: unknown): unknown {
  if (isObject(argumentsText)) return argumentsText;
  if (typeof argumentsText !== 'string' || argumentsText.trim() === '') return {};
  try {
    const input: unknown = JSON.parse(argumentsText);
    return isObject(input) ? input : {};
  } catch {
    return {};
  }
}

/**
 * The stop sequence that ended the turn, when the upstream says which one: a `stop_sequence`
 * field (gateways that translate from Anthropic) or vLLM's string `stop_reason`.
 */
export function stopSequenceOf(choice: JsonObject): string | null {
  const value = choice['stop_sequence'] ?? choice['stop_reason'];
  return choice['finish_reason'] === 'stop' && typeof value === 'string' && value !== '' ? value : null;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
