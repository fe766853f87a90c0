import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ModelCallOutcome } from '../../gateway/model-call.ts';
import { relayResponse, type RelayResult } from '../../gateway/relay/relay-response.ts';
import type { UpstreamResponse } from '../../providers/upstream-client.ts';
import { headWith, noteStreamEnd } from './stream-headers.ts';

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

/**
 * Streams an upstream answer to the client under the reply's own headers (request id,
 * rate-limit headers) plus `headers`; resolves once the response has ended. The request's
 * log line records how it ended.
 */
export async function relayToClient(
  request: FastifyRequest,
  reply: FastifyReply,
  response: UpstreamResponse,
  headers: OutgoingHttpHeaders,
  signal: AbortSignal,
): Promise<RelayResult> {
  reply.hijack();
  const merged = headWith(reply, headers);
  const result = await relayResponse(reply.raw, { status: response.statusCode, headers: merged, body: response.body }, signal);
  noteStreamEnd(request, result.ending, false);
  return result;
}

/**
 * Relays the answer of a model call (audio): its content headers and bytes as they arrive,
 * the admission's rate-limit headers, slots held until the response ends, and usage
 * reported once (tokens when the answer is JSON with a `usage`).
 */
export async function relayModelCall(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: ModelCallOutcome<UpstreamResponse>,
  signal: AbortSignal,
): Promise<void> {
  request.logFields = { provider: outcome.target.adapter.name, model: outcome.target.model };
  if (outcome.attempts.length > 1) request.logFields['attempts'] = outcome.attempts;
  reply.raw.once('close', outcome.admission.release);
  const headers = { ...outcome.admission.headers, ...contentHeadersOf(outcome.result.headers) };
  const result = await relayToClient(request, reply, outcome.result, headers, signal);
  outcome.report(result.status, result.usage);
}
