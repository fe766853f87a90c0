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
  #onEnd: (() => void) | null = null;
  #closed = false;
  /** Told when the client leaves (the request log's trail); a field, not a listener, to spare an allocation. */
  watcher: { gone(): void } | null = null;

  constructor(raw: ServerResponse) {
    // `on`, not `once`: 'close' comes once, and `once` wraps the listener (a cost per request).
    raw.on('close', () => {
      this.#closed = true;
      this.ending();
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
   * Runs `listener` once (one per request: its admission's release) just before the answer's
   * last bytes are written: from the `onSend` hook for an answer Fastify sends (hooks.ts), from
   * the relay engine before a stream's final `end` (streaming/relay.ts), from a byte relay
   * before its body's end; on 'close' if the response closes unfinished (the client left); or
   * at once if it has closed already. Not later than the last bytes: by then the client may
   * have read the answer and asked again, and with WORKERS > 1 that request can reach the
   * primary through another worker before a release sent only now (the slot would look taken).
   * Node's response is observed, never patched.
   */
  whenClosed(listener: () => void): void {
    if (this.#closed) {
      listener();
      return;
    }
    this.#onEnd = listener;
  }

  /** The answer's last bytes are about to be written: runs the `whenClosed` listener, once. */
  ending(): void {
    const listener = this.#onEnd;
    if (listener === null) return;
    this.#onEnd = null;
    listener();
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
