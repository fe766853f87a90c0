/**
 * Tells when a caller gave up. Lighter than an AbortSignal (an EventTarget, costly to create
 * per request on Node 20): the hot path subscribes to the client's disconnect through this,
 * and a real signal is only made for code that needs one.
 */
export interface AbortSource {
  readonly aborted: boolean;
  /** Calls `listener` once when aborted (not if it already is); returns a function that unsubscribes. */
  onAbort(listener: () => void): () => void;
}

/** An AbortSource over an AbortSignal. */
export function abortSourceOf(signal: AbortSignal): AbortSource {
  return {
    get aborted() {
      return signal.aborted;
    },
    onAbort(listener) {
      signal.addEventListener('abort', listener, { once: true });
      return () => signal.removeEventListener('abort', listener);
    },
  };
}
