import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { toGatewayError } from '../../errors/envelope.ts';
import { GatewayError, providerError } from '../../errors/gateway-error.ts';
import { mapNetworkError } from '../../streaming/network-error.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import { waitForDrain } from '../../streaming/drain.ts';
import type { RelayResult } from '../../streaming/relay-chat-stream.ts';
import { closed, parseChunk, upstreamMessage } from '../../streaming/dialect-relay.ts';
import { SseParser, type SseEvent } from '../../streaming/sse-parser.ts';
import { ChatStreamEnd, incompleteStream } from '../../streaming/stream-end.ts';
import { renderGoogleError } from './errors.ts';
import type { GeminiStreamTranslator } from './stream-translator.ts';
import { isObject } from './wire.ts';

export interface GeminiRelayOptions {
  /** The instance serving the stream, for error messages. */
  provider: string;
  /** `sse` for `?alt=sse`, else Google's streamed JSON array. */
  framing: Framing;
  /** Keep a copy of the chunks sent (as SSE) up to this many characters (response cache). */
  captureLimit?: number;
}

export type Framing = 'sse' | 'json';

interface RelayState {
  usage: UsageObject | null;
  done: boolean;
  /** An error the upstream sent inside its stream. */
  upstreamError: GatewayError | null;
  end: ChatStreamEnd;
  /** Chunks written so far (the JSON array's separators depend on it). */
  written: number;
  capture: string | null;
}

/**
 * Relays an upstream OpenAI chat stream to the client as `streamGenerateContent` chunks,
 * with the chat relay's guarantees (relay-chat-stream.ts): SSE parsed once, usage observed
 * for metering, writes held back while the client's socket is full, the upstream aborted
 * when the client leaves. A stream that breaks off or reports an error ends with a Google
 * error object (`{"error":{"code","message","status"}}`), which the Google SDKs raise,
 * never with a silent end. The caller has already written the response head.
 */
export async function relayGeminiStream(
  upstream: Readable,
  response: ServerResponse,
  translator: GeminiStreamTranslator,
  options: GeminiRelayOptions,
  signal: AbortSignal,
): Promise<RelayResult> {
  const parser = new SseParser();
  const state: RelayState = {
    usage: null,
    done: false,
    upstreamError: null,
    end: new ChatStreamEnd(),
    written: 0,
    capture: options.captureLimit === undefined ? null : '',
  };
  const frames = new Frames(options.framing, state, options.captureLimit ?? 0);
  const render = (events: SseEvent[]): string => frames.render(translateEvents(events, translator, state, options.provider));
  try {
    for await (const chunk of upstream) {
      const text = render(parser.push(chunk as Buffer));
      if (text !== '' && !response.write(text)) await waitForDrain(response);
      if (signal.aborted || state.upstreamError !== null) break;
    }
    if (signal.aborted) return closed(response, state.usage);
    if (state.upstreamError !== null) return failed(response, upstream, frames, state, state.upstreamError, '');
    const tail = render(parser.finish());
    if (!state.done && !state.end.complete(parser.truncated)) {
      return failed(response, upstream, frames, state, incompleteStream(options.provider), tail);
    }
    response.end(tail + frames.render(state.done ? [] : [translator.finish()]) + frames.close());
    return { usage: state.usage, completed: true, clientClosed: false, error: null, captured: state.capture };
  } catch (error) {
    if (signal.aborted) return closed(response, state.usage);
    const failure = error instanceof GatewayError ? error : toGatewayError(mapNetworkError(error, options.provider));
    return failed(response, upstream, frames, state, failure, '');
  }
}

/** Chunks as SSE events or as the elements of one JSON array; the capture is always SSE. */
class Frames {
  private readonly framing: Framing;
  private readonly state: RelayState;
  private readonly limit: number;

  constructor(framing: Framing, state: RelayState, limit: number) {
    this.framing = framing;
    this.state = state;
    this.limit = limit;
  }

  render(chunks: object[]): string {
    let text = '';
    for (const chunk of chunks) {
      const json = JSON.stringify(chunk);
      if (this.state.capture !== null) {
        const event = `data: ${json}\r\n\r\n`;
        this.state.capture = this.state.capture.length + event.length > this.limit ? null : this.state.capture + event;
      }
      text += this.framing === 'sse' ? `data: ${json}\r\n\r\n` : `${this.state.written === 0 ? '[' : ',\r\n'}${json}`;
      this.state.written++;
    }
    return text;
  }

  close(): string {
    if (this.framing === 'sse') return '';
    return this.state.written === 0 ? '[]' : ']';
  }
}

function translateEvents(events: SseEvent[], translator: GeminiStreamTranslator, state: RelayState, provider: string): object[] {
  const out: object[] = [];
  for (const event of events) {
    if (state.done || state.upstreamError !== null) break;
    state.end.observe(event.data);
    if (event.data === '[DONE]') {
      state.done = true;
      out.push(translator.finish());
      continue;
    }
    const chunk = parseChunk(event.data);
    if (chunk === null) continue;
    if (isObject(chunk['usage'])) state.usage = chunk['usage'];
    if (isObject(chunk['error']) && !Array.isArray(chunk['choices'])) {
      state.upstreamError = providerError(upstreamMessage(chunk['error']), { provider, code: 'upstream_error' });
      continue;
    }
    const translated = translator.push(chunk);
    if (translated !== null) out.push(translated);
  }
  return out;
}

function failed(
  response: ServerResponse,
  upstream: Readable,
  frames: Frames,
  state: RelayState,
  failure: GatewayError,
  tail: string,
): RelayResult {
  upstream.destroy();
  state.capture = null;
  response.end(tail + frames.render([renderGoogleError(failure)]) + frames.close());
  return { usage: state.usage, completed: false, clientClosed: false, error: failure, captured: null };
}
