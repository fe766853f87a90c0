import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import { UsageTap } from './usage-tap.ts';

export interface RelayedResponse {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Readable;
}

export interface RelayResult {
  /** `completed`, `client_closed` (the client left) or `upstream_error` (the body broke off). */
  ending: 'completed' | 'client_closed' | 'upstream_error';
  /** The status the usage record gets: 200, 499 or 502 (the relayed status when it completed). */
  status: number;
  /** The `usage` and `model` the answer reported (a JSON answer of any size, or an event stream), when it had them. */
  usage: UsageObject | null;
  model: string | null;
  /** Bytes of the body relayed to the client (as sent, compressed or not). */
  relayed: number;
}

/**
 * Streams an upstream answer to the client as it arrives (audio, files, passthrough), with
 * backpressure, reading the usage a JSON answer or an event stream reports on the way
 * (usage-tap.ts: bounded memory, any size). Resolves once the response has ended, however it
 * ended; the upstream body is destroyed when the client leaves. A response cut short still
 * reports what its stream had counted by then.
 */
export async function relayResponse(raw: ServerResponse, response: RelayedResponse, signal: AbortSignal): Promise<RelayResult> {
  raw.writeHead(response.status, response.headers);
  const tap = UsageTap.for(response.headers);
  try {
    await pipeline(response.body, tap, raw);
  } catch {
    const ending = signal.aborted || raw.destroyed ? 'client_closed' : 'upstream_error';
    if (!raw.destroyed) raw.destroy();
    return { ending, status: ending === 'client_closed' ? 499 : 502, usage: tap.summary().usage, model: null, relayed: tap.relayed };
  }
  const { usage, model } = tap.summary();
  return { ending: 'completed', status: response.status, usage, model, relayed: tap.relayed };
}
