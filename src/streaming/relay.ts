import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { AbortSource } from '../core/abort-source.ts';
import { toGatewayError } from '../errors/envelope.ts';
import { mapNetworkError } from './network-error.ts';
import { UpstreamBody, type ChunkSink } from './upstream-body.ts';
import type { UsageObject } from './chat-chunk.ts';
import { ChunkedBody } from './chunked-body.ts';
import type { StreamRenderer } from './renderer.ts';

export interface RelayResult {
  /** The usage the stream reported, if any. */
  usage: UsageObject | null;
  /** The stream ran to its end. */
  completed: boolean;
  /** The client went away before the end; the upstream request was aborted. */
  clientClosed: boolean;
  /** What broke the stream, if the upstream failed mid-way or reported an error. */
  error: unknown;
  /** Everything written to the client, when capture was asked for and stayed under its limit. */
  captured: string | null;
  /** `performance.now()` of the first body write (time to first token, for the request log). */
  firstByteAt?: number | null;
}

/** The client's side of a relay: its disconnect, and what must run just before the response's last bytes. */
export interface RelayClient extends AbortSource {
  /** Called once, just before the final `end` (the admission's release, ClientAbort.whenClosed). */
  ending?(): void;
}

/** Bytes a relay takes before it lets the event loop serve others for a turn. */
const yieldBytes = 64 * 1024;
/** How long an upstream may keep its stream open after its final event before it is cut (its socket freed). */
const afterDoneGraceMs = 2_000;

/**
 * Relays an upstream stream to the client through `renderer` (renderer.ts): each upstream read
 * rendered once and written at once, the upstream paused while the client's socket is full. A
 * stream that breaks, or ends before its final event, ends with the renderer's error frame. The
 * caller has already written the response head. When the client leaves, the upstream body is
 * destroyed at once.
 */
export function relay(
  upstream: Readable,
  response: ServerResponse,
  renderer: StreamRenderer,
  provider: string,
  client: RelayClient,
): Promise<RelayResult> {
  return new Promise((resolve) => new StreamRelay(upstream, response, renderer, provider, client, resolve).start());
}

/**
 * One relay, driven by the upstream's events: one render per upstream chunk and one write per
 * upstream read, however many events it carried (ADR 0003, 0024 and 0036: no async iterator, no
 * AbortSignal, no promise per chunk).
 */
class StreamRelay implements ChunkSink {
  private settled = false;
  /** The final event came and the renderer's settling work runs: what the upstream still sends is dropped. */
  private ending = false;
  private firstByteAt: number | null = null;
  private unsubscribe: () => void = noop;
  /** Cuts an upstream that does not end after its final event. */
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
  private readonly renderer: StreamRenderer;
  private readonly provider: string;
  private readonly client: RelayClient;
  private readonly resolve: (result: RelayResult) => void;

  constructor(
    upstream: Readable,
    response: ServerResponse,
    renderer: StreamRenderer,
    provider: string,
    client: RelayClient,
    resolve: (result: RelayResult) => void,
  ) {
    this.upstream = upstream;
    this.response = response;
    this.body = new ChunkedBody(response);
    this.renderer = renderer;
    this.provider = provider;
    this.client = client;
    this.resolve = resolve;
  }

  start(): void {
    if (this.client.aborted) return this.clientClosed();
    this.unsubscribe = this.client.onAbort(() => this.clientClosed());
    const head = this.renderer.start?.() ?? '';
    if (head !== '') this.body.write(head);
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
    if (this.settled || this.ending) return true;
    const renderer = this.renderer;
    let output: string | Buffer;
    try {
      output = renderer.push(chunk);
    } catch (error) {
      this.error(error);
      return true;
    }
    if (renderer.done || renderer.upstreamError !== null) {
      this.endWithRead(output);
      return true;
    }
    if (output.length !== 0) {
      this.firstByteAt ??= performance.now();
      if (!this.write(output) && !this.draining) {
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

  /** Text goes through the chunked body (one socket write per read); bytes straight to the response. */
  private write(output: string | Buffer): boolean {
    if (typeof output === 'string') return this.body.write(output);
    const pending = this.body.take();
    if (pending !== '') this.response.write(pending);
    return this.response.write(output);
  }

  /**
   * The final event (`[DONE]`), or an error the upstream reported in its stream, ends the
   * client's stream at once, with the last write: its frame (and whatever this read still had
   * queued) and the body's end go out together. What the upstream sends after `[DONE]` is read
   * and dropped (the connection stays reusable), as it always was; after an error it is cut.
   */
  private endWithRead(output: string | Buffer): void {
    const renderer = this.renderer;
    if (output.length !== 0) this.firstByteAt ??= performance.now();
    const failure = renderer.upstreamError;
    if (failure !== null) {
      this.upstream.destroy();
      return this.settle(false, failure, output);
    }
    const last = typeof output === 'string' ? output + renderer.end() : output;
    const settle = renderer.settle;
    if (settle === undefined) this.settle(true, null, last);
    else {
      // The settling work (recording what the stream created) is done before the last bytes go out, whatever the client does meanwhile.
      this.ending = true;
      this.unsubscribe();
      settle.call(renderer).then(
        () => this.settle(true, null, last),
        (error: unknown) => {
          this.ending = false;
          this.error(error);
        },
      );
    }
    // A paused upstream (full client socket, a yield) is let go on: its rest is read and dropped.
    if (this.holds > 0) setImmediate(() => this.resume());
    // An upstream that keeps the stream open past its end would hold its socket (outside any
    // concurrency rule, the client being answered) until undici's body timeout: cut it.
    this.afterDone = setTimeout(() => this.upstream.destroy(), afterDoneGraceMs);
    this.afterDone.unref();
  }

  end(): void {
    if (this.afterDone !== null) clearTimeout(this.afterDone);
    if (this.settled || this.ending) return;
    let tail: string;
    try {
      tail = this.renderer.end();
    } catch (error) {
      return this.error(error);
    }
    const settle = this.renderer.settle;
    if (settle === undefined) return this.settle(true, null, tail);
    // The client's stream is answered once the settling work is done, whatever the client does meanwhile.
    this.unsubscribe();
    settle.call(this.renderer).then(
      () => this.settle(true, null, tail),
      (error: unknown) => this.error(error),
    );
  }

  error(error: unknown): void {
    if (this.settled || this.ending) return;
    if (this.client.aborted) return this.clientClosed();
    this.upstream.destroy();
    const failure = toGatewayError(mapNetworkError(error, this.provider));
    this.settle(false, error, this.renderer.fail(failure));
    this.renderer.abandon?.();
  }

  private clientClosed(): void {
    if (this.settled) return;
    this.upstream.destroy();
    this.renderer.abandon?.();
    this.settle(false, null, null, true);
  }

  /**
   * Resolves with the result, then ends the response in a microtask queued after it: the
   * caller's continuation (usage report, log fields) runs before the response's 'finish',
   * whose hook writes the request log, even when the end came from an upstream callback. The
   * client's `ending` (the admission's release) runs just before the last bytes are written.
   * A null `last` (the client left, or no error frame fits the body) destroys the response instead.
   */
  private settle(completed: boolean, error: unknown, last: string | Buffer | null, clientClosed = false): void {
    this.settled = true;
    this.unsubscribe();
    this.body.offDrain(this.drained);
    const pending = this.body.take();
    // The result is built field by field: no object spread on the path (ADR 0012).
    this.resolve({
      usage: this.renderer.usage(),
      completed,
      clientClosed,
      error,
      captured: completed ? (this.renderer.captured?.() ?? null) : null,
      firstByteAt: this.firstByteAt,
    });
    const response = this.response;
    const client = this.client;
    queueMicrotask(() => {
      client.ending?.();
      if (typeof last === 'string') response.end(pending + last);
      else if (last === null) {
        if (!response.destroyed) response.destroy();
      } else {
        if (pending !== '') response.write(pending);
        response.end(last);
      }
    });
  }
}

function noop(): void {}
