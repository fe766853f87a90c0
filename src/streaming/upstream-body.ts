import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import undiciErrors from 'undici/lib/core/errors.js';
import type { AbortSource } from '../core/abort-source.ts';

/** An upstream answer whose body is read as it arrives (streams). */
export interface StreamedUpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The body; destroying it aborts the upstream request. */
  body: Readable;
}

/**
 * A consumer that takes an upstream body's bytes straight from the dispatch handler, without
 * the Readable's buffering and events (the chat stream relay). `data` returning false pauses
 * the upstream until the consumer calls `UpstreamBody.resumeUpstream`.
 */
export interface ChunkSink {
  data(chunk: Buffer): boolean;
  end(): void;
  error(error: Error): void;
}

/**
 * The body of a dispatched request: a plain Readable fed by the dispatch handler. Compared
 * with `Pool.request`'s body it has no AsyncResource, no AbortSignal listener and no body
 * mixin (ADR 0003, issue 18). Backpressure pauses the upstream socket. A `ChunkSink` may take
 * over before any reader: then chunks skip the Readable altogether.
 */
export class UpstreamBody extends Readable {
  readonly #controller: Dispatcher.DispatchController;
  ended = false;
  sink: ChunkSink | null = null;

  constructor(controller: Dispatcher.DispatchController) {
    super({ highWaterMark: 64 * 1024 });
    this.#controller = controller;
  }

  /**
   * Hands the rest of the body to `sink`: what arrived already first, in one piece, and its end
   * at once when the whole body is in (a loaded gateway often reads a short stream whole before
   * its relay starts). False when the body is already being read or is broken: the caller reads
   * it as a Readable then.
   */
  attach(sink: ChunkSink): boolean {
    if (this.destroyed || this.readableFlowing !== null || this.readableEnded || this.listenerCount('data') > 0) return false;
    this.sink = sink;
    if (this.readableLength > 0) {
      const buffered = this.read() as Buffer | null;
      if (buffered !== null && !sink.data(buffered) && !this.ended) this.#controller.pause();
    }
    if (this.ended) sink.end();
    return true;
  }

  resumeUpstream(): void {
    if (this.#controller.paused) this.#controller.resume();
  }

  override _read(): void {
    this.resumeUpstream();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.ended) this.#controller.abort(error ?? new undiciErrors.RequestAbortedError());
    callback(error);
  }
}

/**
 * Settles with the status, headers and a streaming body as soon as the head arrives. The
 * caller's abort source aborts the request at any point; an error before the head rejects,
 * after it destroys the body with the error.
 */
export class StreamingHandler implements Dispatcher.DispatchHandler {
  #body: UpstreamBody | null = null;
  #settled = false;
  readonly #resolve: (response: StreamedUpstreamResponse) => void;
  readonly #reject: (error: unknown) => void;
  readonly #abort: AbortSource | undefined;
  #controller: Dispatcher.DispatchController | null = null;
  #unsubscribe: (() => void) | null = null;

  constructor(resolve: (response: StreamedUpstreamResponse) => void, reject: (error: unknown) => void, abort: AbortSource | undefined) {
    this.#resolve = resolve;
    this.#reject = reject;
    this.#abort = abort;
    if (abort !== undefined) this.#unsubscribe = abort.onAbort(() => this.#controller?.abort(new undiciErrors.RequestAbortedError()));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abort?.aborted === true) controller.abort(new undiciErrors.RequestAbortedError());
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    const body = new UpstreamBody(controller);
    this.#body = body;
    this.#settled = true;
    this.#resolve({ statusCode, headers, body });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const body = this.#body;
    if (body === null) return;
    if (body.sink !== null ? !body.sink.data(chunk) : !body.push(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.#release();
    const body = this.#body;
    if (body === null) return;
    body.ended = true;
    if (body.sink !== null) body.sink.end();
    else body.push(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#release();
    if (!this.#settled) {
      this.#settled = true;
      this.#reject(error);
      return;
    }
    const body = this.#body;
    if (body === null || body.destroyed) return;
    body.ended = true;
    if (body.sink !== null) body.sink.error(error);
    else body.destroy(error);
  }

  #release(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
  }
}
