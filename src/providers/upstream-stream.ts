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
 * The body of a dispatched request: a plain Readable fed by the dispatch handler. Compared
 * with `Pool.request`'s body it has no AsyncResource, no AbortSignal listener and no body
 * mixin (reference: ADR 0003, issue 18). Backpressure pauses the upstream socket.
 */
class UpstreamBody extends Readable {
  readonly #controller: Dispatcher.DispatchController;
  ended = false;

  constructor(controller: Dispatcher.DispatchController) {
    super({ highWaterMark: 64 * 1024 });
    this.#controller = controller;
  }

  override _read(): void {
    if (this.#controller.paused) this.#controller.resume();
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
    if (this.#body?.push(chunk) === false) controller.pause();
  }

  onResponseEnd(): void {
    this.#release();
    const body = this.#body;
    if (body === null) return;
    body.ended = true;
    body.push(null);
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
    body.destroy(error);
  }

  #release(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
  }
}
