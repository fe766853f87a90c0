import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { toGatewayError } from '../../errors/envelope.ts';
import { GatewayError, providerError } from '../../errors/gateway-error.ts';
import { mapNetworkError } from '../../streaming/network-error.ts';
import { waitForDrain } from '../../streaming/drain.ts';
import type { RelayResult } from '../../streaming/relay-chat-stream.ts';
import { SseParser, type SseEvent } from '../../streaming/sse-parser.ts';
import { anthropicErrorType } from './errors.ts';
import { frame } from './stream-translator.ts';
import { meteredUsage, mergeUsage } from './usage.ts';
import { isObject, type JsonObject } from './wire.ts';

export interface NativeRelayOptions {
  /** The instance serving the stream, for error messages. */
  provider: string;
  /** Keep a copy of the stream up to this many characters (response cache). */
  captureLimit?: number;
}

/** What the relay has seen of the events so far. */
class EventObserver {
  usage: JsonObject | null = null;
  stopped = false;
  error: JsonObject | null = null;

  observe(events: SseEvent[]): void {
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
    if (parsed['type'] === 'error') this.error = isObject(parsed['error']) ? parsed['error'] : { message: data };
    else if (parsed['type'] === 'message_start' && isObject(parsed['message']))
      this.usage = mergeUsage(this.usage, parsed['message']['usage']);
    else this.usage = mergeUsage(this.usage, parsed['usage']);
  }
}

/**
 * Relays a native Messages event stream to the client byte for byte (STYLE habit 3): the
 * SSE is parsed once only to observe usage (`message_start`, then the cumulative
 * `message_delta`), the end (`message_stop`) and an upstream `error` event, which the
 * client receives as sent. Writes wait while the client's socket is full; the upstream is
 * aborted (through the request signal) when the client leaves; a stream broken off by the
 * network or cut before `message_stop` ends with an `error` event. The caller has written
 * the response head.
 */
export async function relayNativeMessagesStream(
  upstream: Readable,
  response: ServerResponse,
  options: NativeRelayOptions,
  signal: AbortSignal,
): Promise<RelayResult> {
  const parser = new SseParser();
  const observer = new EventObserver();
  const decoder = new TextDecoder();
  const limit = options.captureLimit ?? 0;
  let capture: string | null = options.captureLimit === undefined ? null : '';
  const usage = (): RelayResult['usage'] => (observer.usage === null ? null : meteredUsage(observer.usage));
  // When the first bytes went out (time to first token, for the request log).
  let firstByteAt: number | null = null;
  const withFirstByte = (result: RelayResult): RelayResult => ({ ...result, firstByteAt });
  try {
    for await (const chunk of upstream) {
      const bytes = chunk as Buffer;
      observer.observe(parser.push(bytes));
      if (capture !== null) capture = capture.length + bytes.length > limit ? null : capture + decoder.decode(bytes, { stream: true });
      firstByteAt ??= performance.now();
      if (!response.write(bytes)) await waitForDrain(response);
      if (signal.aborted || observer.error !== null) break;
    }
    if (signal.aborted) return withFirstByte(closed(response, usage()));
    observer.observe(parser.finish());
    if (observer.error !== null)
      return withFirstByte(failed(upstream, response, usage(), upstreamFailure(observer.error, options.provider), false));
    if (!observer.stopped) {
      const cut = providerError(`upstream ${options.provider} ended the stream before message_stop`, { provider: options.provider });
      return withFirstByte(failed(upstream, response, usage(), cut, true));
    }
    response.end();
    return { usage: usage(), completed: true, clientClosed: false, error: null, captured: capture, firstByteAt };
  } catch (error) {
    if (signal.aborted) return withFirstByte(closed(response, usage()));
    const failure = error instanceof GatewayError ? error : toGatewayError(mapNetworkError(error, options.provider));
    return withFirstByte(failed(upstream, response, usage(), failure, true));
  }
}

function failed(
  upstream: Readable,
  response: ServerResponse,
  usage: RelayResult['usage'],
  error: GatewayError,
  tell: boolean,
): RelayResult {
  upstream.destroy();
  // The upstream's own error event has reached the client already; a cut stream gets one.
  response.end(tell ? frame('error', { type: 'error', error: { type: anthropicErrorType(error), message: error.message } }) : undefined);
  return { usage, completed: false, clientClosed: false, error, captured: null };
}

function upstreamFailure(error: JsonObject, provider: string): GatewayError {
  const message =
    typeof error['message'] === 'string' && error['message'] !== '' ? error['message'] : 'the upstream stream reported an error';
  return providerError(`upstream ${provider}: ${message}`, { provider });
}

function closed(response: ServerResponse, usage: RelayResult['usage']): RelayResult {
  if (!response.destroyed) response.destroy();
  return { usage, completed: false, clientClosed: true, error: null, captured: null };
}
