import { cacheModeOf } from './cache-mode.ts';
import type { AbortSource } from '../../core/abort-source.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { chatCompletionsCodec, type CallResult } from '../../gateway/endpoints/chat.ts';
import { readChatRequest } from '../../gateway/chat-request.ts';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { runModelRequest, type ModelOutcome, type StreamOutcome } from '../../gateway/run-model-request.ts';
import { requestContextOf } from '../request-context.ts';
import { relayChatStream, type RelayOptions } from '../../streaming/relay-chat-stream.ts';
import { jsonBodyOf } from '../json-body.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { headWith, noteStreamEnd, streamHeaders } from './stream-headers.ts';
import { settle } from './model-reply.ts';

/** `POST /v1/chat/completions`, JSON or SSE. */
export function registerChatRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies): void {
  app.post('/v1/chat/completions', async (request, reply) => {
    const context = requestContextOf(request, reply);
    const cacheMode = cacheModeOf(request.headers, dependencies.cache !== null);
    let outcome: ModelOutcome<CallResult>;
    try {
      outcome = await runModelRequest(chatCompletionsCodec, readChatRequest(jsonBodyOf(request.body)), context, dependencies, cacheMode);
    } catch (error) {
      throw context.abort.aborted ? clientClosedRequest() : error;
    }
    if (outcome.kind === 'cached') {
      const { cached } = outcome;
      request.logFields = { provider: cached.provider, model: cached.model, cache: 'hit' };
      const type = cached.kind === 'json' ? 'application/json; charset=utf-8' : 'text/event-stream; charset=utf-8';
      return reply.header('x-cache', 'HIT').header('content-type', type).send(cached.body);
    }
    // Slots are held until the response has ended, whether it finished or the client left.
    settle(request, reply, outcome, context.abort);
    if (outcome.kind === 'json') {
      return reply.header('content-type', 'application/json; charset=utf-8').send(outcome.body);
    }
    await streamOutcome(request, reply, outcome, context.abort);
    return reply;
  });
}

async function streamOutcome(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: StreamOutcome<CallResult>,
  abort: AbortSource,
): Promise<void> {
  const stream = outcome.result;
  if (stream.kind !== 'stream') return;
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, headWith(reply, streamHeaders));
  // Built field by field: in V8 11 a spread followed by more fields costs microseconds (ADR 0003).
  const chunkOptions: RelayOptions = stream.chunkOptions;
  if (outcome.captureLimit !== undefined) chunkOptions.captureLimit = outcome.captureLimit;
  const result = await relayChatStream(stream.body, raw, chunkOptions, abort);
  outcome.finish(result);
  // Fastify's onResponse hook writes the request's log line, hijacked or not.
  const ending = result.error !== null ? 'upstream_error' : result.clientClosed ? 'client_closed' : 'completed';
  noteStreamEnd(request, ending);
  if (result.error !== null)
    request.log.warn({ request_id: request.id, ...request.logFields, reason: String(result.error) }, 'stream broken by upstream');
}
