import { providerError, type GatewayError } from '../../errors/gateway-error.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import { Capture, parseChunk, upstreamMessage, type StreamRenderer } from '../../streaming/renderer.ts';
import { SseParser, type SseEvent } from '../../streaming/sse-parser.ts';
import { ChatStreamEnd, incompleteStream } from '../../streaming/stream-end.ts';
import { renderGoogleError } from './errors.ts';
import type { GeminiStreamTranslator } from './stream-translator.ts';
import { isObject } from './wire.ts';

export type Framing = 'sse' | 'json';

/**
 * An upstream OpenAI chat stream rendered as `streamGenerateContent` chunks for the relay
 * engine (streaming/relay.ts): SSE events, or the elements of one JSON array. Usage is
 * observed for metering. A stream that breaks off or reports an error ends with a Google
 * error object (`{"error":{"code","message","status"}}`), which the Google SDKs raise, never
 * with a silent end. The cache keeps the chunks as SSE, whatever the framing.
 */
export class GeminiStreamRenderer implements StreamRenderer {
  private readonly parser = new SseParser();
  private readonly streamEnd = new ChatStreamEnd();
  private readonly translator: GeminiStreamTranslator;
  private readonly provider: string;
  private readonly framing: Framing;
  private readonly capture: Capture;
  private lastUsage: UsageObject | null = null;
  /** Chunks written so far (the JSON array's separators depend on it). */
  private written = 0;
  /** What `end` rendered of a stream that ended incomplete, sent before its error. */
  private held = '';
  done = false;
  /** An error the upstream sent inside its stream. */
  upstreamError: GatewayError | null = null;

  constructor(translator: GeminiStreamTranslator, provider: string, framing: Framing, captureLimit?: number) {
    this.translator = translator;
    this.provider = provider;
    this.framing = framing;
    this.capture = new Capture(captureLimit);
  }

  push(chunk: Buffer): string {
    const text = this.frames(this.translate(this.parser.push(chunk)));
    const failure = this.upstreamError;
    return failure === null ? text : text + this.fail(failure);
  }

  end(): string {
    const tail = this.frames(this.translate(this.parser.finish()));
    if (!this.done && !this.streamEnd.complete(this.parser.truncated)) {
      this.held = tail;
      throw incompleteStream(this.provider);
    }
    return tail + this.frames(this.done ? [] : [this.translator.finish()]) + this.close();
  }

  fail(error: GatewayError): string {
    const held = this.held;
    this.held = '';
    this.capture.text = null;
    return held + this.frames([renderGoogleError(error)]) + this.close();
  }

  usage(): UsageObject | null {
    return this.lastUsage;
  }

  captured(): string | null {
    return this.capture.text;
  }

  /** Chunks as SSE events or as the elements of one JSON array; the capture is always SSE. */
  private frames(chunks: object[]): string {
    let text = '';
    for (const chunk of chunks) {
      const json = JSON.stringify(chunk);
      this.capture.add(`data: ${json}\r\n\r\n`);
      text += this.framing === 'sse' ? `data: ${json}\r\n\r\n` : `${this.written === 0 ? '[' : ',\r\n'}${json}`;
      this.written++;
    }
    return text;
  }

  private close(): string {
    if (this.framing === 'sse') return '';
    return this.written === 0 ? '[]' : ']';
  }

  private translate(events: SseEvent[]): object[] {
    const out: object[] = [];
    for (const event of events) {
      if (this.done || this.upstreamError !== null) break;
      this.streamEnd.observe(event.data);
      if (event.data === '[DONE]') {
        this.done = true;
        out.push(this.translator.finish());
        continue;
      }
      const chunk = parseChunk(event.data);
      if (chunk === null) continue;
      if (isObject(chunk['usage'])) this.lastUsage = chunk['usage'];
      if (isObject(chunk['error']) && !Array.isArray(chunk['choices'])) {
        this.upstreamError = providerError(upstreamMessage(chunk['error']), { provider: this.provider, code: 'upstream_error' });
        continue;
      }
      const translated = this.translator.push(chunk);
      if (translated !== null) out.push(translated);
    }
    return out;
  }
}
