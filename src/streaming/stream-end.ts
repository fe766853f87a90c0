import { providerError, type GatewayError } from '../errors/gateway-error.ts';

/**
 * Whether an OpenAI chat chunk's JSON text has a non-null `finish_reason`. Inside JSON
 * strings quotes are escaped, so `"finish_reason":` can only be a key.
 */
export function hasFinishReason(data: string): boolean {
  let index = data.indexOf('"finish_reason":');
  while (index !== -1) {
    let cursor = index + 16;
    while (data.charCodeAt(cursor) === 32) cursor += 1;
    if (!data.startsWith('null', cursor)) return true;
    index = data.indexOf('"finish_reason":', cursor);
  }
  return false;
}

/**
 * Watches an OpenAI chat chunk stream for its end: `[DONE]`, or a chunk with a finish reason
 * (the usage chunk may follow it). A stream that ends with neither, or whose last frame was
 * cut off, did not complete: the relays end it with an error event instead of `[DONE]`.
 */
export class ChatStreamEnd {
  private done = false;
  private finished = false;

  observe(data: string): void {
    if (data === '[DONE]') this.done = true;
    else if (!this.finished && hasFinishReason(data)) this.finished = true;
  }

  /** `observe` for a chunk already searched: `finishReason` tells whether it has a non-null one. */
  observeSearched(data: string, finishReason: boolean): void {
    if (data === '[DONE]') this.done = true;
    else if (finishReason) this.finished = true;
  }

  /** Whether the stream ended complete, given whether the parser discarded a cut-off frame. */
  complete(truncated: boolean): boolean {
    return this.done || (this.finished && !truncated);
  }
}

/** The error a stream that ended before its final event gets (a 502 in usage records). */
export function incompleteStream(provider: string): GatewayError {
  return providerError(`upstream ${provider} ended the stream before it was complete`, { provider, code: 'upstream_stream_incomplete' });
}
