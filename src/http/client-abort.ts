import type { ServerResponse } from 'node:http';
import type { AbortSource } from '../core/abort-source.ts';
import { invalidRequest, type GatewayError } from '../errors/gateway-error.ts';

/**
 * Aborted when the client goes away before its response is finished. The AbortSignal is made
 * on first use only: a plain JSON call never needs one (it subscribes through `onAbort`).
 */
export class ClientAbort implements AbortSource {
  #aborted = false;
  #controller: AbortController | null = null;
  #listeners: (() => void)[] | null = null;
  #onClose: (() => void) | null = null;
  #closed = false;
  /** Told when the client leaves (the request log's trail); a field, not a listener, to spare an allocation. */
  watcher: { gone(): void } | null = null;

  constructor(raw: ServerResponse) {
    // `on`, not `once`: 'close' comes once, and `once` wraps the listener (a cost per request).
    raw.on('close', () => {
      this.#closed = true;
      this.#onClose?.();
      if (!raw.writableFinished) this.#abort();
    });
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  onAbort(listener: () => void): () => void {
    if (this.#aborted) return () => undefined;
    (this.#listeners ??= []).push(listener);
    return () => {
      const index = this.#listeners?.indexOf(listener) ?? -1;
      if (index !== -1) this.#listeners?.splice(index, 1);
    };
  }

  /**
   * Runs `listener` when the response closes, finished or not, or at once if it has closed
   * already (one per request: its admission's release).
   */
  whenClosed(listener: () => void): void {
    if (this.#closed) listener();
    else this.#onClose = listener;
  }

  #abort(): void {
    this.#aborted = true;
    this.watcher?.gone();
    this.#controller?.abort();
    const listeners = this.#listeners;
    this.#listeners = null;
    for (const listener of listeners ?? []) listener();
  }
}

/** What a request whose client went away ends with (logged; nobody is left to read it). */
export function clientClosedRequest(): GatewayError {
  return invalidRequest('the client closed the request', { status: 499, code: 'client_closed_request' });
}
