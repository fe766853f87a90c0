import { providerError } from '../../errors/gateway-error.ts';
import type { SseEvent } from '../../streaming/sse-parser.ts';
import { mapUpstreamError } from '../upstream-errors.ts';
import { candidateExtras, convertUsage, mapFinishReason, responseIdOf, toolCallId, toolCallOf } from './convert-chat-response.ts';
import { isRecord, text, type GeminiPart, type Json } from './wire.ts';

export interface StreamOptions {
  /** The instance name, used in errors. */
  provider: string;
  /** Unix seconds stamped as `created` on every chunk. */
  created: number;
  /** The model asked for, used until the upstream names its own (`modelVersion`). */
  model: string;
  /** Whether to end with OpenAI's usage chunk (`choices: []`), as `stream_options.include_usage` asks. */
  includeUsage: boolean;
}

interface CandidateState {
  toolCalls: number;
  finishReason: string | null;
}

const doneFrame = 'data: [DONE]\n\n';

/**
 * Turns the events of `streamGenerateContent?alt=sse` (each a partial
 * `GenerateContentResponse`) into OpenAI `chat.completion.chunk` SSE frames: a role chunk
 * per candidate first, text -> `content`, thought parts -> `reasoning_content`, function
 * calls -> whole `tool_calls` deltas, a candidate's `finishReason` -> its finish chunk
 * (with `safety_ratings`), the last `usageMetadata` -> the usage chunk, then `[DONE]`. An
 * `{"error": ...}` event throws the upstream error mapped like an HTTP answer of its code;
 * a body that ends before any finish reason is a provider error (never a silent truncation).
 */
export class GeminiStreamConverter {
  private readonly options: StreamOptions;
  private id: string | null = null;
  private model: string;
  private usage: Json = {};
  private readonly candidates = new Map<number, CandidateState>();
  private blocked = false;
  private ended = false;

  constructor(options: StreamOptions) {
    this.options = options;
    this.model = options.model;
  }

  /** The OpenAI frames for some upstream events ('' when they produce none). */
  push(events: readonly SseEvent[]): string {
    let out = '';
    for (const event of events) {
      if (this.ended) break;
      if (event.data.trim() === '' || event.data.trim() === '[DONE]') continue;
      out += this.convert(this.parse(event.data));
    }
    return out;
  }

  /** Called when the upstream body ends. */
  finish(): string {
    if (this.ended) return '';
    const states = [...this.candidates.values()];
    if (this.blocked && states.length === 0) return this.blockedEnd();
    if (states.length > 0 && states.every((state) => state.finishReason !== null)) return this.end();
    throw providerError(`upstream ${this.options.provider} ended the stream before a finish reason`, {
      provider: this.options.provider,
      code: 'upstream_stream_incomplete',
    });
  }

  private parse(data: string): Json {
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

  private convert(event: Json): string {
    if (isRecord(event['error'])) {
      const code = event['error']['code'];
      throw mapUpstreamError(typeof code === 'number' ? code : 502, JSON.stringify(event), this.options.provider);
    }
    this.id ??= responseIdOf(event);
    this.model = text(event['modelVersion']) ?? this.model;
    if (isRecord(event['usageMetadata'])) this.usage = { ...this.usage, ...event['usageMetadata'] };
    if (isRecord(event['promptFeedback']) && event['promptFeedback']['blockReason'] !== undefined) this.blocked = true;
    const candidates = Array.isArray(event['candidates']) ? event['candidates'].filter(isRecord) : [];
    return candidates.map((candidate, position) => this.candidate(candidate, position)).join('');
  }

  private candidate(candidate: Json, position: number): string {
    const index = typeof candidate['index'] === 'number' ? candidate['index'] : position;
    let out = '';
    let state = this.candidates.get(index);
    if (state === undefined) {
      state = { toolCalls: 0, finishReason: null };
      this.candidates.set(index, state);
      out += this.frame(index, { role: 'assistant', content: '' });
    }
    const content = isRecord(candidate['content']) ? candidate['content'] : {};
    const parts = (Array.isArray(content['parts']) ? content['parts'] : []).filter(isRecord) as GeminiPart[];
    for (const part of parts) out += this.part(index, state, part);
    const reason = text(candidate['finishReason']);
    if (reason !== undefined && state.finishReason === null) {
      state.finishReason = mapFinishReason(reason, state.toolCalls > 0);
      out += this.frame(index, {}, state.finishReason, candidateExtras(candidate));
    }
    return out;
  }

  private part(index: number, state: CandidateState, part: GeminiPart): string {
    if (part.functionCall !== undefined) {
      const call = { index: state.toolCalls, ...toolCallOf(part, toolCallId(part.functionCall)) };
      state.toolCalls += 1;
      return this.frame(index, { tool_calls: [call] });
    }
    if (typeof part.text !== 'string' || part.text === '') return '';
    return this.frame(index, part.thought === true ? { reasoning_content: part.text } : { content: part.text });
  }

  /** A prompt blocked before any candidate: one empty choice ending with content_filter. */
  private blockedEnd(): string {
    return this.frame(0, { role: 'assistant', content: '' }) + this.frame(0, {}, 'content_filter') + this.end();
  }

  private end(): string {
    this.ended = true;
    if (!this.options.includeUsage) return doneFrame;
    const chunk = { id: this.id ?? '', object: 'chat.completion.chunk', created: this.options.created, model: this.model, choices: [] };
    return `data: ${JSON.stringify({ ...chunk, usage: convertUsage(this.usage) })}\n\n${doneFrame}`;
  }

  private frame(index: number, delta: Json, finishReason: string | null = null, extras: Json = {}): string {
    const chunk = {
      id: this.id ?? '',
      object: 'chat.completion.chunk',
      created: this.options.created,
      model: this.model,
      choices: [{ index, delta, logprobs: null, finish_reason: finishReason, ...extras }],
    };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }
}
