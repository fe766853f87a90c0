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

  readonly #raw: ServerResponse;

  constructor(raw: ServerResponse) {
    this.#raw = raw;
    // `on`, not `once`: 'close' comes once, and `once` wraps the listener (a cost per request).
    raw.on('close', () => {
      this.#closed = true;
      this.#ended();
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
   * Runs `listener` once (one per request: its admission's release): when the response ends,
   * before its last bytes are written, or when it closes unfinished (the client left), or at
   * once if it has closed already. Not on 'close' after a finished response: by then the client
   * may have read the answer and asked again, and with WORKERS > 1 that request can reach the
   * primary through another worker before a release sent only now (the slot would look taken).
   * Run from `end`, the release leaves on the IPC channel before the answer's end leaves.
   */
  whenClosed(listener: () => void): void {
    if (this.#closed) {
      listener();
      return;
    }
    this.#onEnd = listener;
    const raw = this.#raw;
    const end = raw.end;
    raw.end = ((...args: unknown[]): ServerResponse => {
      try {
        this.#ended();
      } finally {
        Reflect.apply(end, raw, args);
      }
      return raw;
    }) as ServerResponse['end'];
  }

  #ended(): void {
    const listener = this.#onEnd;
    this.#onEnd = null;
    listener?.();
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
