import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { toGatewayError } from '../../errors/envelope.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { mapNetworkError } from '../../streaming/network-error.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import type { RelayResult } from '../../streaming/relay-chat-stream.ts';
import { closed, parseChunk, upstreamMessage } from '../../streaming/dialect-relay.ts';
import { SseParser, type SseEvent } from '../../streaming/sse-parser.ts';
import { ChatStreamEnd, incompleteStream } from '../../streaming/stream-end.ts';
import { anthropicErrorType } from './errors.ts';
import type { MessagesStreamTranslator } from './stream-translator.ts';
import { isObject } from './wire.ts';
import { waitForDrain } from '../../streaming/drain.ts';

export interface MessagesRelayOptions {
  /** The instance serving the stream, for error messages. */
  provider: string;
  /** Keep a copy of the events sent to the client up to this many characters (response cache). */
  captureLimit?: number;
}

interface RelayState {
  usage: UsageObject | null;
  /** The upstream sent `[DONE]` or the translator ended the stream. */
  done: boolean;
  /** An error chunk the upstream sent inside the stream. */
  upstreamError: unknown;
  capture: string | null;
  end: ChatStreamEnd;
}

/**
 * Relays an upstream OpenAI chat stream to the client as Anthropic Messages events, with the
 * chat relay's guarantees (relay-chat-stream.ts, ADR-0003): SSE parsed once, usage observed
 * for metering, writes held back while the client's socket is full, the upstream aborted
 * (through the request signal) when the client leaves, an `error` event when the upstream
 * breaks off. The cache keeps the events the client received, replayed as they are on
 * hits. The caller has already written the response head.
 */
export async function relayMessagesStream(
  upstream: Readable,
  response: ServerResponse,
  translator: MessagesStreamTranslator,
  options: MessagesRelayOptions,
  signal: AbortSignal,
): Promise<RelayResult> {
  const parser = new SseParser();
  const state: RelayState = {
    usage: null,
    done: false,
    upstreamError: null,
    capture: options.captureLimit === undefined ? null : '',
    end: new ChatStreamEnd(),
  };
  const limit = options.captureLimit ?? 0;
  const render = (events: SseEvent[]): string => translateEvents(events, translator, state);
  const keep = (text: string): string => {
    if (state.capture !== null) state.capture = state.capture.length + text.length > limit ? null : state.capture + text;
    return text;
  };
  // When the first translated event went out (time to first token, for the request log).
  let firstByteAt: number | null = null;
  try {
    for await (const chunk of upstream) {
      const text = keep(render(parser.push(chunk as Buffer)));
      if (text !== '') firstByteAt ??= performance.now();
      if (text !== '' && !response.write(text)) await waitForDrain(response);
      if (signal.aborted || state.upstreamError !== null) break;
    }
    if (signal.aborted) return closed(response, state.usage);
    if (state.upstreamError !== null) {
      upstream.destroy();
      response.end();
      return { usage: state.usage, completed: false, clientClosed: false, error: state.upstreamError, captured: null, firstByteAt };
    }
    const tail = render(parser.finish());
    if (!state.end.complete(parser.truncated)) {
      // Ended before its final chunk: an `error` event, not a message_stop the client would trust.
      const failure = incompleteStream(options.provider);
      response.end(tail + translator.fail(anthropicErrorType(failure), failure.message));
      return { usage: state.usage, completed: false, clientClosed: false, error: failure, captured: null, firstByteAt };
    }
    response.end(keep(tail + translator.finish()));
    return { usage: state.usage, completed: true, clientClosed: false, error: null, captured: state.capture, firstByteAt };
  } catch (error) {
    if (signal.aborted) return closed(response, state.usage);
    upstream.destroy();
    // An adapter that translates the stream fails it with the upstream's own error.
    const failure = error instanceof GatewayError ? error : toGatewayError(mapNetworkError(error, options.provider));
    response.end(translator.fail(anthropicErrorType(failure), failure.message));
    return { usage: state.usage, completed: false, clientClosed: false, error, captured: null, firstByteAt };
  }
}

/** An OpenAI chat stream, whole, as Anthropic events (the fixtures replay recorded streams). */
export function translateCapturedStream(sse: string, translator: MessagesStreamTranslator): string {
  const parser = new SseParser();
  const state: RelayState = { usage: null, done: false, upstreamError: null, capture: null, end: new ChatStreamEnd() };
  const events = [...parser.push(Buffer.from(sse)), ...parser.finish()];
  return translateEvents(events, translator, state) + translator.finish();
}

function translateEvents(events: SseEvent[], translator: MessagesStreamTranslator, state: RelayState): string {
  let text = '';
  for (const event of events) {
    if (state.done) break;
    state.end.observe(event.data);
    if (event.data === '[DONE]') {
      state.done = true;
      text += translator.finish();
      continue;
    }
    const chunk = parseChunk(event.data);
    if (chunk === null) continue;
    if (isObject(chunk['usage'])) state.usage = chunk['usage'];
    if (isObject(chunk['error']) && !Array.isArray(chunk['choices'])) {
      state.done = true;
      state.upstreamError = chunk['error'];
      state.capture = null;
      text += translator.fail('api_error', upstreamMessage(chunk['error']));
      continue;
    }
    text += translator.push(chunk);
  }
  return text;
}
