import type { ServerResponse } from 'node:http';
import { parseJsonObject } from '../core/json.ts';
import type { UsageObject } from './chat-chunk.ts';
import type { RelayResult } from './relay-chat-stream.ts';

// Helpers the dialect relays (an OpenAI chat stream re-rendered in another API's format) share.

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

/** The client left: its socket is closed, and the stream counts as closed by the client. */
export function closed(response: ServerResponse, usage: UsageObject | null): RelayResult {
  if (!response.destroyed) response.destroy();
  return { usage, completed: false, clientClosed: true, error: null, captured: null };
}
