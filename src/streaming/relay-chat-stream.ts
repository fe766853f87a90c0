import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { renderEnvelope, toGatewayError } from '../errors/envelope.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { mapNetworkError } from '../providers/upstream-client.ts';
import { transformChunk, type ChunkOptions, type UsageObject } from './chat-chunk.ts';
import { SseParser, type SseEvent } from './sse-parser.ts';
import { ChatStreamEnd, incompleteStream } from './stream-end.ts';
import { waitForDrain } from './drain.ts';

export interface RelayResult {
  /** The usage reported by the upstream's final chunk, if any. */
  usage: UsageObject | null;
  /** The stream ran to its end. */
  completed: boolean;
  /** The client went away before the end; the upstream request was aborted. */
  clientClosed: boolean;
  /** What broke the stream, if the upstream failed mid-way. */
  error: unknown;
  /** Everything written to the client, when capture was asked for and stayed under its limit. */
  captured: string | null;
  /** `performance.now()` of the first body write (time to first token, for the request log). */
  firstByteAt?: number | null;
}

export interface RelayOptions extends ChunkOptions {
  /** Keep a copy of the output up to this many characters (for the response cache). */
  captureLimit?: number;
}

const doneFrame = 'data: [DONE]\n\n';

/**
 * Relays an upstream OpenAI chat stream to the client: SSE parsed once, each chunk stamped
 * with the provider, the usage chunk hidden unless the client asked for it, writes held back
 * while the client's socket is full. A stream that breaks, or ends before its final chunk
 * (no `[DONE]`, no finish reason, a cut-off frame), ends with an error frame (the envelope
 * under `error`, which SDKs raise), never with a synthetic `[DONE]`. The caller has already
 * written the response head.
 */
export async function relayChatStream(
  upstream: Readable,
  response: ServerResponse,
  options: RelayOptions,
  signal: AbortSignal,
): Promise<RelayResult> {
  const parser = new SseParser();
  const state: RelayState = { usage: null, done: false, end: new ChatStreamEnd() };
  const capture = { text: options.captureLimit === undefined ? null : ('' as string | null), limit: options.captureLimit ?? 0 };
  const render = (events: SseEvent[]): string => {
    const text = renderEvents(events, options, state);
    if (capture.text !== null) capture.text = capture.text.length + text.length > capture.limit ? null : capture.text + text;
    return text;
  };
  let firstByteAt: number | null = null;
  try {
    for await (const chunk of upstream) {
      const text = render(parser.push(chunk as Buffer));
      if (text !== '') firstByteAt ??= performance.now();
      if (text !== '' && !response.write(text)) await waitForDrain(response);
      if (signal.aborted) break;
    }
    if (signal.aborted)
      return finish(response, state.usage, { completed: false, clientClosed: true, error: null, captured: null, firstByteAt });
    let tail = render(parser.finish());
    if (!state.end.complete(parser.truncated)) {
      const failure = incompleteStream(options.provider);
      response.end(tail + errorFrame(failure));
      return { usage: state.usage, completed: false, clientClosed: false, error: failure, captured: null };
    }
    if (!state.done) tail += doneFrame;
    response.end(tail);
    const captured = capture.text === null || state.done ? capture.text : capture.text + doneFrame;
    return { usage: state.usage, completed: true, clientClosed: false, error: null, captured, firstByteAt };
  } catch (error) {
    if (signal.aborted)
      return finish(response, state.usage, { completed: false, clientClosed: true, error: null, captured: null, firstByteAt });
    upstream.destroy();
    const failure = toGatewayError(mapNetworkError(error, options.provider));
    response.end(errorFrame(failure));
    return { usage: state.usage, completed: false, clientClosed: false, error, captured: null, firstByteAt };
  }
}

interface RelayState {
  usage: UsageObject | null;
  /** `[DONE]` was relayed. */
  done: boolean;
  end: ChatStreamEnd;
}

function errorFrame(failure: GatewayError): string {
  return `data: ${JSON.stringify(renderEnvelope(failure))}\n\n`;
}

function renderEvents(events: SseEvent[], options: ChunkOptions, state: RelayState): string {
  let text = '';
  for (const event of events) {
    if (state.done) break;
    state.end.observe(event.data);
    if (event.data === '[DONE]') {
      state.done = true;
      text += doneFrame;
      continue;
    }
    const outcome = transformChunk(event.data, options);
    if (outcome.usage !== null) state.usage = outcome.usage;
    // A payload that spanned several `data:` lines goes out the same way (one field per line).
    if (outcome.payload !== null)
      text += `data: ${outcome.payload.includes('\n') ? outcome.payload.replaceAll('\n', '\ndata: ') : outcome.payload}\n\n`;
  }
  return text;
}

function finish(response: ServerResponse, usage: UsageObject | null, rest: Omit<RelayResult, 'usage'>): RelayResult {
  if (!response.destroyed) response.destroy();
  return { usage, ...rest };
}
