import { isJsonObject as isRecord } from '../../core/json.ts';
import { providerError } from '../../errors/gateway-error.ts';
import type { SseEvent } from '../../streaming/sse-parser.ts';
import { mapUpstreamError } from '../upstream-errors.ts';
import { finishReasonOf, messageOf, usageOf, type GeminiStreamOptions, type GeminiStreamTranslator } from './gemini-minimal.ts';

const doneFrame = 'data: [DONE]\n\n';

/**
 * `streamGenerateContent?alt=sse` events (each a whole GenerateContentResponse holding the
 * new parts) as OpenAI chunk frames: the first event opens with the role, text parts become
 * content deltas, function calls whole tool-call deltas, `finishReason` the finish chunk; the
 * last `usageMetadata` is the usage chunk. An `{"error": ...}` event throws the mapped error;
 * a body that ends before any finish reason is an incomplete stream.
 */
export class GeminiMinimalStream implements GeminiStreamTranslator {
  private readonly options: GeminiStreamOptions;
  private id = '';
  private model: string;
  private started = false;
  private calls = 0;
  private usage: unknown = {};
  private finished = false;

  constructor(options: GeminiStreamOptions) {
    this.options = options;
    this.model = options.model;
    this.id = `chatcmpl-${options.created}`;
  }

  push(events: readonly SseEvent[]): string {
    let text = '';
    for (const event of events) text += this.convert(this.parse(event.data));
    return text;
  }

  finish(): string {
    if (!this.finished) {
      throw providerError(`upstream ${this.options.provider} ended the stream before a finish reason`, {
        provider: this.options.provider,
        code: 'upstream_stream_incomplete',
      });
    }
    if (!this.options.includeUsage) return doneFrame;
    const chunk = { id: this.id, object: 'chat.completion.chunk', created: this.options.created, model: this.model, choices: [] };
    return `data: ${JSON.stringify({ ...chunk, usage: usageOf(this.usage) })}\n\n${doneFrame}`;
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
    if (isRecord(event['error'])) {
      const code = event['error']['code'];
      throw mapUpstreamError(typeof code === 'number' ? code : 502, JSON.stringify(event), this.options.provider);
    }
    if (typeof event['responseId'] === 'string') this.id = `chatcmpl-${event['responseId']}`;
    if (typeof event['modelVersion'] === 'string') this.model = event['modelVersion'];
    if (isRecord(event['usageMetadata'])) this.usage = event['usageMetadata'];
    let text = '';
    if (!this.started) {
      this.started = true;
      text += this.frame({ role: 'assistant', content: '' });
    }
    const candidate = Array.isArray(event['candidates']) ? event['candidates'].find(isRecord) : undefined;
    if (candidate === undefined) return text;
    const { message, calls } = messageOf(candidate, this.calls);
    if (typeof message['reasoning_content'] === 'string') text += this.frame({ reasoning_content: message['reasoning_content'] });
    if (typeof message['content'] === 'string' && message['content'] !== '') text += this.frame({ content: message['content'] });
    if (Array.isArray(message['tool_calls'])) {
      const deltas = message['tool_calls'].map((call, offset) => ({ index: this.calls + offset, ...(call as Record<string, unknown>) }));
      text += this.frame({ tool_calls: deltas });
    }
    this.calls += calls;
    const reason = finishReasonOf(candidate['finishReason'], this.calls > 0);
    if (reason !== null && !this.finished) {
      this.finished = true;
      text += this.frame({}, reason);
    }
    return text;
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
