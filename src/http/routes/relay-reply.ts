import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamOutcome } from '../../gateway/run-model-request.ts';
import { UsageTap } from '../../gateway/relay/usage-tap.ts';
import type { UpstreamResponse } from '../../providers/upstream-client.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import type { RelayClient } from '../../streaming/relay.ts';
import type { SseEvent } from '../../streaming/sse-parser.ts';
import { endingOf, sendStream } from './stream-headers.ts';

/** The headers of an upstream answer that describe its body (kept on relayed endpoints). */
const contentHeaders = ['content-type', 'content-disposition', 'content-encoding', 'content-language'];

export function contentHeadersOf(headers: UpstreamResponse['headers']): OutgoingHttpHeaders {
  const kept: OutgoingHttpHeaders = {};
  for (const name of contentHeaders) {
    const value = headers[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

export interface RelayedAnswer {
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
 * Streams an upstream answer to the client as it arrives (audio, files, passthrough, image
 * streams) under the reply's own headers (request id, rate-limit headers) plus `headers`:
 * the bytes pass through the relay engine untouched while the usage a JSON answer or an
 * event stream reports is read on the way (usage-tap.ts: bounded memory, any size). A
 * response cut short still reports what its stream had counted by then; the upstream body
 * is destroyed when the client leaves. `beforeEnd` runs once a completed answer is read, before
 * its end reaches the client; `onEvent` sees each event of an event stream as it passes. The
 * request's log line records how it ended.
 */
export async function relayToClient(
  request: FastifyRequest,
  reply: FastifyReply,
  response: UpstreamResponse,
  headers: OutgoingHttpHeaders,
  client: RelayClient,
  streamFlag = false,
  beforeEnd: ((tap: UsageTap) => Promise<void>) | null = null,
  onEvent: ((event: SseEvent) => void) | null = null,
): Promise<RelayedAnswer> {
  const tap = UsageTap.for(headers);
  tap.beforeEnd = beforeEnd;
  if (onEvent !== null) tap.observeEvents(onEvent);
  const stream = { upstream: response.body, renderer: tap, provider: '', status: response.statusCode, streamFlag };
  const result = await sendStream(request, reply, headers, stream, client);
  const ending = endingOf(result);
  if (ending !== 'completed')
    return { ending, status: result.clientClosed ? 499 : 502, usage: result.usage, model: null, relayed: tap.relayed };
  const { usage, model } = tap.summary();
  return { ending, status: response.statusCode, usage, model, relayed: tap.relayed };
}

/**
 * Relays the answer of a model call (audio): its content headers and bytes as they arrive,
 * the admission's rate-limit headers, slots held until the response ends, and usage
 * reported once (tokens when the answer is JSON with a `usage`).
 */
export async function relayModelCall(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: StreamOutcome<UpstreamResponse>,
  client: RelayClient,
): Promise<void> {
  request.logFields = { provider: outcome.target.adapter.name, model: outcome.target.model };
  if (outcome.attempts.length > 1) request.logFields['attempts'] = outcome.attempts;
  reply.raw.once('close', outcome.admission.release);
  const headers = { ...outcome.admission.headers, ...contentHeadersOf(outcome.result.headers) };
  const result = await relayToClient(request, reply, outcome.result, headers, client);
  outcome.report(result.status, result.usage);
}
