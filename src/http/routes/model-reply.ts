import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamOutcome } from '../../gateway/run-model-request.ts';
import type { UpstreamResponse } from '../../providers/upstream-client.ts';
import type { ChunkOptions } from '../../streaming/chat-chunk.ts';
import { ChatRenderer } from '../../streaming/chat-renderer.ts';
import type { ClientAbort } from '../client-abort.ts';
import { contentHeadersOf, relayToClient } from './relay-reply.ts';
import { sendStream, streamHeaders } from './stream-headers.ts';

/** How the answers of a model call (completions, moderations, images) reach the client. */

type Settled = Pick<StreamOutcome<unknown>, 'target' | 'attempts' | 'admission'>;

/** Names the executed target in the request's log line; slots are held until the response closes. */
export function settle(request: FastifyRequest, reply: FastifyReply, outcome: Settled, abort: ClientAbort): void {
  request.logFields = { provider: outcome.target.adapter.name, model: outcome.target.model };
  if (outcome.attempts.length > 1) request.logFields['attempts'] = outcome.attempts;
  abort.whenClosed(outcome.admission.release);
  reply.headers(outcome.admission.headers);
}

/** Sends a checked JSON answer (stamped with `provider`; the pipeline recorded its usage). */
export function sendJsonAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: Settled & { body: string },
  abort: ClientAbort,
): FastifyReply {
  settle(request, reply, outcome, abort);
  return reply.header('content-type', 'application/json; charset=utf-8').send(outcome.body);
}

/**
 * Relays an OpenAI-style chunk stream (legacy completions) through the chat stream relay:
 * chunks stamped with `provider`, the usage chunk shown only if the client asked for it,
 * usage recorded once the stream has ended.
 */
export async function relaySseAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: StreamOutcome<unknown>,
  stream: { body: Readable; chunkOptions: ChunkOptions },
  abort: ClientAbort,
): Promise<void> {
  settle(request, reply, outcome, abort);
  const relayed = { upstream: stream.body, renderer: new ChatRenderer(stream.chunkOptions), provider: stream.chunkOptions.provider };
  await sendStream(request, reply, streamHeaders, relayed, abort, (result) => outcome.finish(result));
}

/**
 * Relays an upstream event stream as it is (image streams), bytes untouched, under the
 * reply's headers and the upstream's content headers; the last `usage` an event carried is
 * recorded once the stream has ended.
 */
export async function relayEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: StreamOutcome<unknown>,
  response: UpstreamResponse,
  abort: ClientAbort,
): Promise<void> {
  settle(request, reply, outcome, abort);
  // The relay reads the usage an event carries (usage-tap.ts); the upstream body is destroyed when the client leaves.
  const result = await relayToClient(request, reply, response, contentHeadersOf(response.headers), abort, true);
  outcome.report(result.status, result.usage);
}
