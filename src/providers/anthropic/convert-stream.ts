import { providerError } from '../../errors/gateway-error.ts';
import type { SseEvent } from '../../streaming/sse-parser.ts';
import { mapUpstreamError } from '../upstream-errors.ts';
import { convertUsage, mapFinishReason } from './convert-chat-response.ts';
import { isRecord, type AnthropicUsage } from './wire.ts';

export interface StreamOptions {
  /** The instance name, used in errors. */
  provider: string;
  /** Unix seconds stamped as `created` on every chunk. */
  created: number;
  /** The model asked for, used until the upstream names its own. */
  model: string;
  /** Whether to end with OpenAI's usage chunk (`choices: []`), as `stream_options.include_usage` asks. */
  includeUsage: boolean;
}

/** HTTP statuses of Anthropic's error types, for an `error` event that arrives in a stream. */
export const errorStatuses: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

const doneFrame = 'data: [DONE]\n\n';

interface ToolBlock {
  /** Position among the answer's tool calls (OpenAI's `index`), not the content block index. */
  index: number;
  sawArguments: boolean;
}

/**
 * Turns Anthropic's Messages stream events into OpenAI `chat.completion.chunk` SSE frames,
 * one event at a time: message_start -> the role chunk, text/thinking/input_json deltas ->
 * content / reasoning_content / tool-call argument deltas, message_delta -> the finish
 * chunk, message_stop -> the usage chunk (when asked for) and `[DONE]`. An `error` event
 * throws the upstream's error, mapped like an HTTP error answer of its type.
 */
export class AnthropicStreamConverter {
  private readonly options: StreamOptions;
  private id = '';
  private model: string;
  private usage: AnthropicUsage = {};
  private readonly tools = new Map<number, ToolBlock>();
  private finishReason: string | null = null;
  private ended = false;

  constructor(options: StreamOptions) {
    this.options = options;
    this.model = options.model;
  }

  /** The OpenAI frames for some upstream events ('' when they produce none). */
  push(events: readonly SseEvent[]): string {
    let text = '';
    for (const event of events) {
      if (this.ended) break;
      text += this.convert(this.parse(event.data));
    }
    return text;
  }

  /** Called when the upstream body ends: a stream cut before its end is a provider error. */
  finish(): string {
    if (this.ended) return '';
    if (this.finishReason !== null) return this.end();
    throw providerError(`upstream ${this.options.provider} ended the stream before message_stop`, {
      provider: this.options.provider,
      code: 'invalid_upstream_response',
    });
  }

  private parse(data: string): Record<string, unknown> {
    try {
      const parsed: unknown = JSON.parse(data);
      if (isRecord(parsed)) return parsed;
    } catch {
      // reported below
    }
    throw providerError(`upstream ${this.options.provider} sent a stream event that is not a JSON object`, {
      provider: this.options.provider,
      code: 'invalid_upstream_response',
    });
  }

  private convert(event: Record<string, unknown>): string {
    switch (event['type']) {
      case 'message_start':
        return this.start(isRecord(event['message']) ? event['message'] : {});
      case 'content_block_start':
        return this.blockStart(Number(event['index']), isRecord(event['content_block']) ? event['content_block'] : {});
      case 'content_block_delta':
        return this.blockDelta(Number(event['index']), isRecord(event['delta']) ? event['delta'] : {});
      case 'content_block_stop':
        return this.blockStop(Number(event['index']));
      case 'message_delta':
        return this.messageDelta(event);
      case 'message_stop':
        return this.end();
      case 'error':
        throw this.upstreamError(event);
      default:
        return ''; // ping, and event types added later
    }
  }

  private start(message: Record<string, unknown>): string {
    if (typeof message['id'] === 'string') this.id = message['id'];
    if (typeof message['model'] === 'string' && message['model'] !== '') this.model = message['model'];
    if (isRecord(message['usage'])) this.mergeUsage(message['usage']);
    return this.frame({ role: 'assistant', content: '' });
  }

  private blockStart(index: number, block: Record<string, unknown>): string {
    if (block['type'] === 'tool_use') {
      const tool = { index: this.tools.size, sawArguments: false };
      this.tools.set(index, tool);
      const call = { index: tool.index, id: block['id'], type: 'function', function: { name: block['name'], arguments: '' } };
      return this.frame({ tool_calls: [call] });
    }
    if (block['type'] === 'text' && typeof block['text'] === 'string' && block['text'] !== '')
      return this.frame({ content: block['text'] });
    if (block['type'] === 'thinking' && typeof block['thinking'] === 'string' && block['thinking'] !== '') {
      return this.frame({ reasoning_content: block['thinking'] });
    }
    return '';
  }

  private blockDelta(index: number, delta: Record<string, unknown>): string {
    switch (delta['type']) {
      case 'text_delta':
        return typeof delta['text'] === 'string' ? this.frame({ content: delta['text'] }) : '';
      case 'thinking_delta':
        return typeof delta['thinking'] === 'string' ? this.frame({ reasoning_content: delta['thinking'] }) : '';
      case 'input_json_delta': {
        const tool = this.tools.get(index);
        const partial = delta['partial_json'];
        if (tool === undefined || typeof partial !== 'string' || partial === '') return '';
        tool.sawArguments = true;
        return this.frame({ tool_calls: [{ index: tool.index, function: { arguments: partial } }] });
      }
      default:
        return ''; // signature_delta, citations_delta
    }
  }

  /** A tool call whose input streamed no JSON has no arguments: clients still get `{}` to parse. */
  private blockStop(index: number): string {
    const tool = this.tools.get(index);
    if (tool === undefined || tool.sawArguments) return '';
    tool.sawArguments = true;
    return this.frame({ tool_calls: [{ index: tool.index, function: { arguments: '{}' } }] });
  }

  private messageDelta(event: Record<string, unknown>): string {
    if (isRecord(event['usage'])) this.mergeUsage(event['usage']);
    const delta = isRecord(event['delta']) ? event['delta'] : {};
    this.finishReason = mapFinishReason(typeof delta['stop_reason'] === 'string' ? delta['stop_reason'] : null);
    return this.frame({}, this.finishReason);
  }

  private end(): string {
    this.ended = true;
    if (!this.options.includeUsage) return doneFrame;
    const chunk = { id: this.id, object: 'chat.completion.chunk', created: this.options.created, model: this.model, choices: [] };
    return `data: ${JSON.stringify({ ...chunk, usage: convertUsage(this.usage) })}\n\n${doneFrame}`;
  }

  /** message_delta usage is cumulative: its non-null counts replace message_start's. */
  private mergeUsage(usage: Record<string, unknown>): void {
    const merged: AnthropicUsage = { ...this.usage };
    for (const [key, value] of Object.entries(usage)) if (value !== null || !(key in merged)) merged[key] = value;
    this.usage = merged;
  }

  private upstreamError(event: Record<string, unknown>): Error {
    const error = isRecord(event['error']) ? event['error'] : {};
    const status = (typeof error['type'] === 'string' ? errorStatuses[error['type']] : undefined) ?? 502;
    return mapUpstreamError(status, JSON.stringify(event), this.options.provider);
  }

  private frame(delta: Record<string, unknown>, finishReason: string | null = null): string {
    const chunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.options.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }
}
