import { stopReasonOf, stopSequenceOf, toMessagesUsage } from './convert-response.ts';
import { isObject, messageIdFor, type JsonObject } from './wire.ts';

export interface StreamTranslatorOptions {
  /** The model named when the upstream's chunks name none. */
  model: string;
  /** The message id when the upstream sends no chunk id (the gateway's request id). */
  fallbackId: string;
  /** Sent in `message_start`; `message_delta` carries the upstream's real counts. */
  estimatedInputTokens: number;
}

type OpenBlock = { kind: 'text' | 'thinking'; index: number } | { kind: 'tool'; index: number };

/** One frame of Anthropic's stream: `event: <type>` and the JSON whose `type` is the same. */
export function frame(type: string, data: JsonObject): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/**
 * OpenAI chat chunks in, Anthropic Messages stream events out: `message_start`, one
 * `content_block_start`, `content_block_delta`s and `content_block_stop` per text, thinking
 * or tool-use block, then `message_delta` (stop reason and usage) and `message_stop` once
 * the upstream has finished (its usage chunk comes after the finish reason). Pure and
 * incremental: the relay feeds parsed chunks and writes what comes back.
 */
export class MessagesStreamTranslator {
  private readonly options: StreamTranslatorOptions;
  private started = false;
  private ended = false;
  private nextIndex = 0;
  private open: OpenBlock | null = null;
  /** Block of each OpenAI tool-call index, and the call id it was opened with. */
  private readonly tools = new Map<number, { index: number; id: string | null }>();
  private hasToolUse = false;
  private finishReason: unknown = null;
  private stopSequence: string | null = null;
  private usage: unknown = null;
  private refused = false;

  constructor(options: StreamTranslatorOptions) {
    this.options = options;
  }

  /** Whether the stream has ended (message_stop or an error event written). */
  get done(): boolean {
    return this.ended;
  }

  /** The frames for one parsed upstream chunk. */
  push(chunk: JsonObject): string {
    if (this.ended) return '';
    let out = this.start(chunk);
    if (isObject(chunk['usage'])) this.usage = chunk['usage'];
    const choices = chunk['choices'];
    const choice = Array.isArray(choices) ? (choices as unknown[]).find((item) => isObject(item) && (item['index'] ?? 0) === 0) : undefined;
    if (!isObject(choice)) return out;
    const delta = isObject(choice['delta']) ? choice['delta'] : {};
    const reasoning = delta['reasoning_content'] ?? delta['reasoning'];
    if (typeof reasoning === 'string' && reasoning !== '') out += this.textDelta('thinking', reasoning);
    if (typeof delta['content'] === 'string' && delta['content'] !== '') out += this.textDelta('text', delta['content']);
    if (typeof delta['refusal'] === 'string' && delta['refusal'] !== '') {
      this.refused = true;
      out += this.textDelta('text', delta['refusal']);
    }
    if (Array.isArray(delta['tool_calls'])) for (const call of delta['tool_calls'] as unknown[]) out += this.toolDelta(call);
    if (typeof choice['finish_reason'] === 'string') {
      this.finishReason = choice['finish_reason'];
      this.stopSequence = stopSequenceOf(choice);
    }
    return out;
  }

  /** The closing frames: the open block's stop, `message_delta` and `message_stop`. */
  finish(): string {
    if (this.ended) return '';
    let out = this.start({});
    out += this.closeBlock();
    this.ended = true;
    const reason = this.refused && !this.hasToolUse ? 'refusal' : stopReasonOf(this.finishReason, this.hasToolUse, this.stopSequence);
    const delta = { stop_reason: reason, stop_sequence: reason === 'stop_sequence' ? this.stopSequence : null };
    out += frame('message_delta', { delta, usage: toMessagesUsage(this.usage, this.options.estimatedInputTokens) });
    return out + frame('message_stop', {});
  }

  /** An `error` event that ends the stream (the upstream broke off or sent an error). */
  fail(type: string, message: string): string {
    if (this.ended) return '';
    this.ended = true;
    return frame('error', { error: { type, message } });
  }

  private start(chunk: JsonObject): string {
    if (this.started) return '';
    this.started = true;
    const model = typeof chunk['model'] === 'string' && chunk['model'] !== '' ? chunk['model'] : this.options.model;
    const message = {
      id: messageIdFor(chunk['id'], this.options.fallbackId),
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...toMessagesUsage(null, this.options.estimatedInputTokens) },
    };
    return frame('message_start', { message });
  }

  private textDelta(kind: 'text' | 'thinking', text: string): string {
    let out = '';
    if (this.open?.kind !== kind) {
      out += this.closeBlock();
      const index = this.nextIndex++;
      this.open = { kind, index };
      const block = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
      out += frame('content_block_start', { index, content_block: block });
    }
    const delta = kind === 'text' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text };
    return out + frame('content_block_delta', { index: this.open.index, delta });
  }

  private toolDelta(call: unknown): string {
    if (!isObject(call)) return '';
    const key = typeof call['index'] === 'number' ? call['index'] : 0;
    const id = typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : null;
    const fn = isObject(call['function']) ? call['function'] : {};
    let out = '';
    let tool = this.tools.get(key);
    // A new index, or (from upstreams that send no index) a new call id, opens a new block.
    if (tool === undefined || (id !== null && tool.id !== null && id !== tool.id)) {
      out += this.closeBlock();
      tool = { index: this.nextIndex++, id };
      this.tools.set(key, tool);
      this.open = { kind: 'tool', index: tool.index };
      this.hasToolUse = true;
      const name = typeof fn['name'] === 'string' ? fn['name'] : '';
      const block = { type: 'tool_use', id: id ?? `toolu_${this.options.fallbackId}_${tool.index}`, name, input: {} };
      out += frame('content_block_start', { index: tool.index, content_block: block });
    }
    const args = fn['arguments'];
    if (typeof args === 'string' && args !== '') {
      out += frame('content_block_delta', { index: tool.index, delta: { type: 'input_json_delta', partial_json: args } });
    }
    return out;
  }

  private closeBlock(): string {
    if (this.open === null) return '';
    const index = this.open.index;
    this.open = null;
    return frame('content_block_stop', { index });
  }
}
