import { providerError, type GatewayError } from '../../errors/gateway-error.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import { Capture, type StreamRenderer } from '../../streaming/renderer.ts';
import { SseParser, type SseEvent } from '../../streaming/sse-parser.ts';
import { anthropicErrorType } from './errors.ts';
import { frame } from './stream-translator.ts';
import { meteredUsage, mergeUsage } from './usage.ts';
import { isObject, type JsonObject } from './wire.ts';

/**
 * A native Messages event stream passed to the client byte for byte (STYLE habit 3) by the
 * relay engine (streaming/relay.ts): the SSE is parsed once only to observe usage
 * (`message_start`, then the cumulative `message_delta`), the end (`message_stop`) and an
 * upstream `error` event, which the client receives as sent (the stream ends there). A stream
 * broken off by the network or cut before `message_stop` ends with an `error` event.
 */
export class NativeMessagesRenderer implements StreamRenderer {
  private readonly parser = new SseParser();
  private readonly decoder = new TextDecoder();
  private readonly provider: string;
  private readonly capture: Capture;
  private observed: JsonObject | null = null;
  private stopped = false;
  /** The upstream's own `error` event, already relayed. */
  private reported: JsonObject | null = null;
  readonly done = false;
  upstreamError: GatewayError | null = null;

  constructor(provider: string, captureLimit?: number) {
    this.provider = provider;
    this.capture = new Capture(captureLimit);
  }

  push(chunk: Buffer): Buffer {
    this.observe(this.parser.push(chunk));
    this.keep(chunk);
    if (this.reported !== null) this.upstreamError = upstreamFailure(this.reported, this.provider);
    return chunk;
  }

  end(): string {
    this.observe(this.parser.finish());
    if (this.reported !== null) throw upstreamFailure(this.reported, this.provider);
    if (!this.stopped) throw providerError(`upstream ${this.provider} ended the stream before message_stop`, { provider: this.provider });
    return '';
  }

  fail(error: GatewayError): string {
    // The upstream's own error event has reached the client already; a cut stream gets one.
    if (this.reported !== null) return '';
    return frame('error', { type: 'error', error: { type: anthropicErrorType(error), message: error.message } });
  }

  usage(): UsageObject | null {
    return this.observed === null ? null : meteredUsage(this.observed);
  }

  captured(): string | null {
    return this.capture.text;
  }

  /** The bytes, decoded, kept for the cache (a multi-byte character split across reads stays whole). */
  private keep(chunk: Buffer): void {
    const text = this.capture.text;
    if (text === null) return;
    if (text.length + chunk.length > this.capture.limit) this.capture.text = null;
    else this.capture.text = text + this.decoder.decode(chunk, { stream: true });
  }

  private observe(events: SseEvent[]): void {
    for (const event of events) {
      // Only the events that carry usage, the end or an error are parsed.
      if (event.event === 'message_stop') this.stopped = true;
      else if (event.event === 'message_start' || event.event === 'message_delta' || event.event === 'error') this.read(event.data);
    }
  }

  private read(data: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(parsed)) return;
    if (parsed['type'] === 'error') this.reported = isObject(parsed['error']) ? parsed['error'] : { message: data };
    else if (parsed['type'] === 'message_start' && isObject(parsed['message']))
      this.observed = mergeUsage(this.observed, parsed['message']['usage']);
    else this.observed = mergeUsage(this.observed, parsed['usage']);
  }
}

function upstreamFailure(error: JsonObject, provider: string): GatewayError {
  const message =
    typeof error['message'] === 'string' && error['message'] !== '' ? error['message'] : 'the upstream stream reported an error';
  return providerError(`upstream ${provider}: ${message}`, { provider });
}
