import type { OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { relay, type RelayClient, type RelayResult } from '../../streaming/relay.ts';
import type { StreamRenderer } from '../../streaming/renderer.ts';

/** The response head of a server-sent-events answer (no proxy buffering, no caching). */
export const streamHeaders = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
});

/**
 * The reply's headers with `headers` over them, for a hijacked response's `writeHead`: the same
 * as `{ ...reply.getHeaders(), ...headers }`, without the spread. `getHeaders` returns a fresh
 * object, so it is filled in place: in V8 11 (Node 20) a spread followed by anything else costs
 * microseconds per call (ADR 0003, issue 18 addendum).
 */
export function headWith(reply: FastifyReply, headers: Readonly<OutgoingHttpHeaders>): OutgoingHttpHeaders {
  const head = reply.getHeaders() as OutgoingHttpHeaders;
  for (const name of Object.keys(headers)) head[name] = headers[name];
  return head;
}

/** Adds how a relayed stream ended to the request's log fields (in place, no spread). */
export function noteStreamEnd(request: FastifyRequest, ending: string, streamFlag = true): void {
  const fields = request.logFields ?? {};
  if (streamFlag) fields['stream'] = true;
  fields['stream_end'] = ending;
  request.logFields = fields;
}

/** How a relayed stream ended, for the request's log line. */
export function endingOf(result: RelayResult): 'completed' | 'client_closed' | 'upstream_error' {
  return result.error !== null ? 'upstream_error' : result.clientClosed ? 'client_closed' : 'completed';
}

/** The status a relayed stream's usage record gets: 499 when the client left, 502 when the upstream broke it. */
export function statusOf(result: RelayResult): number {
  return result.clientClosed ? 499 : result.error !== null ? 502 : 200;
}

/** An upstream body and how the relay engine renders it for the client. */
export interface StreamedAnswer {
  readonly upstream: Readable;
  readonly renderer: StreamRenderer;
  /** The instance serving it, for error messages. */
  readonly provider: string;
  /** The response's status (200 unless a byte relay passes the upstream's on). */
  readonly status?: number;
  /** Whether the log line says `stream: true` (not for a relayed file or audio answer). */
  readonly streamFlag?: boolean;
}

/**
 * The one way a streamed answer is sent: the reply hijacked, its head written (the reply's
 * headers, request id and rate-limit headers, plus `headers`), the upstream relayed through
 * its renderer by the relay engine (streaming/relay.ts, which runs the client's release just
 * before the last bytes), the result reported (`finish`: usage, cache, trail), and how the
 * stream ended noted for the request's log line (written by Fastify's onResponse hook,
 * hijacked or not).
 */
export async function sendStream(
  request: FastifyRequest,
  reply: FastifyReply,
  headers: Readonly<OutgoingHttpHeaders>,
  stream: StreamedAnswer,
  client: RelayClient,
  finish?: (result: RelayResult) => void,
): Promise<RelayResult> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(stream.status ?? 200, headWith(reply, headers));
  const result = await relay(stream.upstream, raw, stream.renderer, stream.provider, client);
  finish?.(result);
  noteStreamEnd(request, endingOf(result), stream.streamFlag);
  if (result.error !== null)
    request.log.warn({ request_id: request.id, ...request.logFields, reason: String(result.error) }, 'stream broken by upstream');
  return result;
}
