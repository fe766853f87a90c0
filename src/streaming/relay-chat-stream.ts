import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { AbortSource } from '../core/abort-source.ts';
import { renderEnvelope, toGatewayError } from '../errors/envelope.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { mapNetworkError } from './network-error.ts';
import { UpstreamBody, type ChunkSink } from './upstream-body.ts';
import { chunkKeys, finishKey, transformChunk, type ChunkOptions, type UsageObject } from './chat-chunk.ts';
import { ChunkedBody } from './chunked-body.ts';
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
/** Bytes a relay takes before it lets the event loop serve others for a turn. */
const yieldBytes = 64 * 1024;
/** How long an upstream may keep its stream open after `[DONE]` before it is cut (its socket freed). */
const afterDoneGraceMs = 2_000;

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
 * One relay, driven by the upstream's events: one render per upstream chunk and one write per
 * upstream read, however many chunks it carried (ADR 0003 and 0024: no async iterator, no
 * AbortSignal, no promise per chunk).
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
  /** Cuts an upstream that does not end after `[DONE]`. */
  private afterDone: NodeJS.Timeout | null = null;
  /** Resumes the upstream (paused while `holds` > 0). */
  private resume = (): void => {
    this.upstream.resume();
  };
  /** Reasons the upstream is paused: the client's socket is full, a yield to the event loop. */
  private holds = 0;
  private draining = false;
  /** Bytes taken since the last yield to the event loop. */
  private unyielded = 0;
  private readonly release = (): void => {
    this.holds -= 1;
    if (this.holds === 0 && !this.settled) this.resume();
  };
  private readonly drained = (): void => {
    this.draining = false;
    this.release();
  };

  private readonly upstream: Readable;
  private readonly response: ServerResponse;
  private readonly body: ChunkedBody;
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
    this.body = new ChunkedBody(response);
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
      this.resume = () => upstream.resumeUpstream();
      if (upstream.attach(this)) return;
      this.resume = () => upstream.resume();
    }
    upstream.on('data', (chunk: Buffer) => {
      if (!this.data(chunk)) upstream.pause();
    });
    upstream.on('end', () => this.end());
    upstream.on('error', (error: unknown) => this.error(error));
  }

  /**
   * One upstream read: rendered and written at once. False pauses the upstream: while the
   * client's socket is full, and for one event-loop turn every `yieldBytes` (a dispatched body
   * hands over whatever the socket holds in one go; without the pause a huge frame would keep
   * the loop from serving anything else, as the Readable's high-water mark did before).
   */
  data(chunk: Buffer): boolean {
    if (this.settled) return true;
    let text: string;
    try {
      text = this.render(this.parser.push(chunk));
    } catch (error) {
      this.error(error);
      return true;
    }
    if (this.done) {
      this.endAtDone(text);
      return true;
    }
    if (text !== '') {
      this.firstByteAt ??= performance.now();
      if (!this.body.write(text) && !this.draining) {
        this.draining = true;
        this.holds += 1;
        this.body.onDrain(this.drained);
      }
    }
    this.unyielded += chunk.length;
    if (this.unyielded >= yieldBytes) {
      this.unyielded = 0;
      this.holds += 1;
      setImmediate(this.release);
    }
    return this.holds === 0;
  }

  /**
   * `[DONE]` ends the client's stream at once, with the last write: its frame (and whatever this
   * read still had queued) and the chunked body's end go out together. What the upstream sends
   * after it is read and dropped (the connection stays reusable), as it always was.
   */
  private endAtDone(text: string): void {
    this.firstByteAt ??= performance.now();
    const response = this.response;
    const last = this.body.take() + text;
    this.settle({ completed: true, clientClosed: false, error: null, captured: this.captured }, () => response.end(last));
    // A paused upstream (full client socket, a yield) is let go on: its rest is read and dropped.
    if (this.holds > 0) setImmediate(() => this.resume());
    // An upstream that keeps the stream open past [DONE] would hold its socket (outside any
    // concurrency rule, the client being answered) until undici's body timeout: cut it.
    this.afterDone = setTimeout(() => this.upstream.destroy(), afterDoneGraceMs);
    this.afterDone.unref();
  }

  end(): void {
    if (this.afterDone !== null) clearTimeout(this.afterDone);
    if (this.settled) return;
    const tail = this.body.take() + this.render(this.parser.finish());
    const response = this.response;
    if (!this.streamEnd.complete(this.parser.truncated)) {
      const failure = incompleteStream(this.options.provider);
      return this.settle({ completed: false, clientClosed: false, error: failure, captured: null }, () =>
        response.end(tail + errorFrame(failure)),
      );
    }
    const last = tail + doneFrame;
    const captured = this.captured === null ? null : this.captured + doneFrame;
    this.settle({ completed: true, clientClosed: false, error: null, captured }, () => response.end(last));
  }

  error(error: unknown): void {
    if (this.settled) return;
    if (this.abort.aborted) return this.clientClosed();
    this.upstream.destroy();
    const failure = toGatewayError(mapNetworkError(error, this.options.provider));
    const response = this.response;
    const last = this.body.take() + errorFrame(failure);
    this.settle({ completed: false, clientClosed: false, error, captured: null }, () => response.end(last));
  }

  private clientClosed(): void {
    if (this.settled) return;
    this.upstream.destroy();
    this.body.take();
    const response = this.response;
    this.settle({ completed: false, clientClosed: true, error: null, captured: null }, () => {
      if (!response.destroyed) response.destroy();
    });
  }

  /**
   * Resolves with the result, then ends the response in a microtask queued after it: the
   * caller's continuation (usage report, log fields) runs before the response's 'finish',
   * whose hook writes the request log, even when the end came from an upstream callback.
   */
  private settle(rest: Omit<RelayResult, 'usage' | 'firstByteAt'>, respond: () => void): void {
    this.settled = true;
    this.unsubscribe();
    this.body.offDrain(this.drained);
    // The result is built field by field: no object spread on the path (ADR 0012).
    this.resolve({
      usage: this.usage,
      completed: rest.completed,
      clientClosed: rest.clientClosed,
      error: rest.error,
      captured: rest.captured,
      firstByteAt: this.firstByteAt,
    });
    queueMicrotask(respond);
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
    if (data === '[DONE]') {
      this.streamEnd.observeSearched(data, false);
      this.done = true;
      return doneFrame;
    }
    const keys = chunkKeys(data); // one search for usage, provider and finish reason
    this.streamEnd.observeSearched(data, (keys & finishKey) !== 0);
    const outcome = transformChunk(data, this.options, keys);
    if (outcome.usage !== null) this.usage = outcome.usage;
    if (outcome.payload === null) return '';
    // A payload that spanned several `data:` lines goes out the same way (one field per line).
    // The check is on the received text (a slice, searched in place), not on the built one, and
    // only once the stream has had such an event (one-line events are the rule).
    if (this.parser.multilineSeen && data.includes('\n')) return `data: ${outcome.payload.replaceAll('\n', '\ndata: ')}\n\n`;
    return `data: ${outcome.payload}\n\n`;
  }
}

function errorFrame(failure: GatewayError): string {
  return `data: ${JSON.stringify(renderEnvelope(failure))}\n\n`;
}

function noop(): void {}
