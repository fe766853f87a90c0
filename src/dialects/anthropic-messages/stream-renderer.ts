import type { GatewayError } from '../../errors/gateway-error.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import { Capture, parseChunk, upstreamMessage, type StreamRenderer } from '../../streaming/renderer.ts';
import { SseParser, type SseEvent } from '../../streaming/sse-parser.ts';
import { ChatStreamEnd, incompleteStream } from '../../streaming/stream-end.ts';
import { anthropicErrorType } from './errors.ts';
import type { MessagesStreamTranslator } from './stream-translator.ts';
import { isObject } from './wire.ts';

/**
 * An upstream OpenAI chat stream rendered as Anthropic Messages events for the relay engine
 * (streaming/relay.ts), which gives it the chat relay's guarantees (ADR 0003, 0036). Usage is
 * observed for metering; an error chunk from the upstream ends the stream with an `error`
 * event; so does a stream that ends before its final chunk (never a message_stop the client
 * would trust). The cache keeps the events the client received, replayed as they are on hits.
 */
export class MessagesStreamRenderer implements StreamRenderer {
  private readonly parser = new SseParser();
  private readonly streamEnd = new ChatStreamEnd();
  private readonly translator: MessagesStreamTranslator;
  private readonly provider: string;
  private readonly capture: Capture;
  private lastUsage: UsageObject | null = null;
  /** What `end` rendered of a stream that ended incomplete, sent before its error event. */
  private held = '';
  /** The upstream sent `[DONE]`. */
  done = false;
  /** An error chunk the upstream sent inside the stream. */
  upstreamError: unknown = null;

  constructor(translator: MessagesStreamTranslator, provider: string, captureLimit?: number) {
    this.translator = translator;
    this.provider = provider;
    this.capture = new Capture(captureLimit);
  }

  push(chunk: Buffer): string {
    const text = this.translate(this.parser.push(chunk));
    this.capture.add(text);
    return text;
  }

  end(): string {
    const tail = this.translate(this.parser.finish());
    if (!this.done && !this.streamEnd.complete(this.parser.truncated)) {
      this.held = tail;
      throw incompleteStream(this.provider);
    }
    const last = tail + this.translator.finish();
    this.capture.add(last);
    return last;
  }

  fail(error: GatewayError): string {
    const held = this.held;
    this.held = '';
    return held + this.translator.fail(anthropicErrorType(error), error.message);
  }

  usage(): UsageObject | null {
    return this.lastUsage;
  }

  captured(): string | null {
    return this.upstreamError === null ? this.capture.text : null;
  }

  private translate(events: SseEvent[]): string {
    let text = '';
    for (const event of events) {
      if (this.done || this.upstreamError !== null) break;
      this.streamEnd.observe(event.data);
      if (event.data === '[DONE]') {
        this.done = true;
        text += this.translator.finish();
        continue;
      }
      const chunk = parseChunk(event.data);
      if (chunk === null) continue;
      if (isObject(chunk['usage'])) this.lastUsage = chunk['usage'];
      if (isObject(chunk['error']) && !Array.isArray(chunk['choices'])) {
        this.upstreamError = chunk['error'];
        text += this.translator.fail('api_error', upstreamMessage(chunk['error']));
        continue;
      }
      text += this.translator.push(chunk);
    }
    return text;
  }
}

/** An OpenAI chat stream, whole, as Anthropic events (the fixtures replay recorded streams). */
export function translateCapturedStream(sse: string, translator: MessagesStreamTranslator): string {
  // The blank line ends a last event the recording left open; `finish` closes a stream cut short.
  return new MessagesStreamRenderer(translator, 'fixture').push(Buffer.from(`${sse}\n\n`)) + translator.finish();
}
