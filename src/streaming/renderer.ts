import { parseJsonObject } from '../core/json.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { UsageObject } from './chat-chunk.ts';

/**
 * What the relay engine (relay.ts) writes for one upstream stream, and what it learns from it:
 * a dialect's translator (chat chunks re-stamped, or re-rendered as Anthropic, Gemini or
 * Responses events), or a pass-through that sends the bytes as they came and only observes
 * them. The engine owns the loop and its guarantees (backpressure, end, error frame, client
 * close); a renderer owns the parsing, the output and the capture for the cache.
 */
export interface StreamRenderer {
  /** Written before the first upstream byte. */
  start?(): string;
  /** One upstream read, rendered: text, or the bytes as they came ('' for nothing to write). */
  push(chunk: Buffer): string | Buffer;
  /** The stream's final event came (`[DONE]`): the engine ends the response with this read and `end()`. */
  readonly done: boolean;
  /** An error the upstream reported inside its stream (its frame is in `push`'s output): the response ends with that read. */
  readonly upstreamError: unknown;
  /** What to write once the upstream has ended (or is `done`). Throws the error of a stream that ended incomplete. */
  end(): string;
  /** Work done after `end` and before its text reaches the client (storing the response). */
  settle?(): Promise<void>;
  /**
   * The frame that tells the client the stream broke (with anything `end` held back); null when
   * the body's format has no room for one (a byte relay): the response is destroyed then.
   */
  fail(error: GatewayError): string | null;
  /** The stream is over without its end (the client left, the upstream broke): let go of what it holds. */
  abandon?(): void;
  /** The usage to meter. */
  usage(): UsageObject | null;
  /** Everything written, when a capture was asked for and stayed under its limit. */
  captured?(): string | null;
}

/** A copy of a stream's output for the response cache, dropped once it passes its limit. */
export class Capture {
  text: string | null;
  readonly limit: number;

  constructor(limit: number | undefined) {
    this.text = limit === undefined ? null : '';
    this.limit = limit ?? 0;
  }

  add(text: string): void {
    if (this.text !== null && text !== '') this.text = this.text.length + text.length > this.limit ? null : this.text + text;
  }
}

// Helpers the dialect renderers (an OpenAI chat stream re-rendered in another API's format) share.

/** An upstream SSE event's data as a chat chunk object, or null (keep-alives, comments, `[DONE]`). */
export function parseChunk(data: string): Record<string, unknown> | null {
  if (data.charCodeAt(0) !== 123) return null; // not an object (keep-alives, comments)
  return parseJsonObject(data);
}

/** The message of an error chunk the upstream sent inside its stream. */
export function upstreamMessage(error: Record<string, unknown>): string {
  const message = error['message'];
  return typeof message === 'string' && message !== '' ? message : 'the upstream stream reported an error';
}
