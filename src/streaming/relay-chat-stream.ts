import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { AbortSource } from '../core/abort-source.ts';
import { renderEnvelope, toGatewayError } from '../errors/envelope.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { mapNetworkError } from '../providers/upstream-client.ts';
import { UpstreamBody, type ChunkSink } from '../providers/upstream-stream.ts';
import { transformChunk, type ChunkOptions, type UsageObject } from './chat-chunk.ts';
import { SseParser, type SseEvent } from './sse-parser.ts';
import { ChatStreamEnd, incompleteStream } from './stream-end.ts';

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
 * with the provider, the usage chunk hidden unless the client asked for it, the upstream
 * paused while the client's socket is full. A stream that breaks, or ends before its final
 * chunk (no `[DONE]`, no finish reason, a cut-off frame), ends with an error frame (the
 * envelope under `error`, which SDKs raise), never with a synthetic `[DONE]`. The caller has
 * already written the response head. When the client leaves (`abort`), the upstream body is
 * destroyed at once.
 */
export function relayChatStream(
  upstream: Readable,
  response: ServerResponse,
  options: RelayOptions,
  abort: AbortSource,
): Promise<RelayResult> {
  return new Promise((resolve) => new ChatStreamRelay(upstream, response, options, abort, resolve).start());
}

/**
 * One relay, driven by the upstream's events: one render and one write per upstream read
 * (ADR 0003, issue 18: no async iterator, no AbortSignal, no promise per chunk).
 */
class ChatStreamRelay implements ChunkSink {
  private readonly parser = new SseParser();
  private readonly streamEnd = new ChatStreamEnd();
  private usage: UsageObject | null = null;
  /** `[DONE]` was relayed. */
  private done = false;
  private settled = false;
  private captured: string | null;
  private firstByteAt: number | null = null;
  private unsubscribe: () => void = noop;
  /** Resumes the upstream once the client's socket has drained. */
  private onDrain = (): void => {
    this.upstream.resume();
  };
  private draining = false;
  private readonly drained = (): void => {
    this.draining = false;
    this.onDrain();
  };

  private readonly upstream: Readable;
  private readonly response: ServerResponse;
  private readonly options: RelayOptions;
  private readonly abort: AbortSource;
  private readonly resolve: (result: RelayResult) => void;

  constructor(
    upstream: Readable,
    response: ServerResponse,
    options: RelayOptions,
    abort: AbortSource,
    resolve: (result: RelayResult) => void,
  ) {
    this.upstream = upstream;
    this.response = response;
    this.options = options;
    this.abort = abort;
    this.resolve = resolve;
    this.captured = options.captureLimit === undefined ? null : '';
  }

  start(): void {
    if (this.abort.aborted) return this.clientClosed();
    this.unsubscribe = this.abort.onAbort(() => this.clientClosed());
    const upstream = this.upstream;
    // A body dispatched by the upstream client hands its chunks over directly (no Readable events).
    if (upstream instanceof UpstreamBody) {
      this.onDrain = () => upstream.resumeUpstream();
      if (upstream.attach(this)) return;
      this.onDrain = () => upstream.resume();
    }
    upstream.on('data', (chunk: Buffer) => {
      if (!this.data(chunk)) upstream.pause();
    });
    upstream.on('end', () => this.end());
    upstream.on('error', (error: unknown) => this.error(error));
  }

  /** One upstream read: rendered and written at once; false while the client's socket is full. */
  data(chunk: Buffer): boolean {
    if (this.settled) return true;
    let text: string;
    try {
      text = this.render(this.parser.push(chunk));
    } catch (error) {
      this.error(error);
      return true;
    }
    if (text === '') return true;
    this.firstByteAt ??= performance.now();
    if (this.response.write(text)) return true;
    if (!this.draining) {
      this.draining = true;
      this.response.once('drain', this.drained);
    }
    return false;
  }

  end(): void {
    if (this.settled) return;
    const tail = this.render(this.parser.finish());
    if (!this.streamEnd.complete(this.parser.truncated)) {
      const failure = incompleteStream(this.options.provider);
      this.response.end(tail + errorFrame(failure));
      return this.settle({ completed: false, clientClosed: false, error: failure, captured: null });
    }
    this.response.end(this.done ? tail : tail + doneFrame);
    const captured = this.captured === null || this.done ? this.captured : this.captured + doneFrame;
    this.settle({ completed: true, clientClosed: false, error: null, captured });
  }

  error(error: unknown): void {
    if (this.settled) return;
    if (this.abort.aborted) return this.clientClosed();
    this.upstream.destroy();
    const failure = toGatewayError(mapNetworkError(error, this.options.provider));
    this.response.end(errorFrame(failure));
    this.settle({ completed: false, clientClosed: false, error, captured: null });
  }

  private clientClosed(): void {
    if (this.settled) return;
    this.upstream.destroy();
    if (!this.response.destroyed) this.response.destroy();
    this.settle({ completed: false, clientClosed: true, error: null, captured: null });
  }

  private settle(rest: Omit<RelayResult, 'usage' | 'firstByteAt'>): void {
    this.settled = true;
    this.unsubscribe();
    this.response.off('drain', this.drained);
    // The result is built field by field: no object spread on the path (ADR 0012).
    this.resolve({
      usage: this.usage,
      completed: rest.completed,
      clientClosed: rest.clientClosed,
      error: rest.error,
      captured: rest.captured,
      firstByteAt: this.firstByteAt,
    });
  }

  private render(events: SseEvent[]): string {
    let text = '';
    for (const event of events) {
      if (this.done) break;
      text += this.renderEvent(event.data);
    }
    if (this.captured !== null && text !== '') {
      const limit = this.options.captureLimit ?? 0;
      this.captured = this.captured.length + text.length > limit ? null : this.captured + text;
    }
    return text;
  }

  private renderEvent(data: string): string {
    this.streamEnd.observe(data);
    if (data === '[DONE]') {
      this.done = true;
      return doneFrame;
    }
    const outcome = transformChunk(data, this.options);
    if (outcome.usage !== null) this.usage = outcome.usage;
    if (outcome.payload === null) return '';
    // A payload that spanned several `data:` lines goes out the same way (one field per line).
    // The check is on the received text (a slice, searched in place), not on the built one.
    if (data.includes('\n')) return `data: ${outcome.payload.replaceAll('\n', '\ndata: ')}\n\n`;
    return `data: ${outcome.payload}\n\n`;
  }
}

function errorFrame(failure: GatewayError): string {
  return `data: ${JSON.stringify(renderEnvelope(failure))}\n\n`;
}

function noop(): void {}
