import { cacheModeOf } from './cache-mode.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { runChatCompletion, type ChatOutcome } from '../../gateway/chat-completions.ts';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { requestContextOf } from '../request-context.ts';
import { ChatRenderer } from '../../streaming/chat-renderer.ts';
import { jsonBodyOf } from '../json-body.ts';
import { clientClosedRequest, type ClientAbort } from '../client-abort.ts';
import { sendStream, streamHeaders } from './stream-headers.ts';
import type { RelayResult } from '../../streaming/relay.ts';

/** `POST /v1/chat/completions`, JSON or SSE. */
export function registerChatRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies): void {
  app.post('/v1/chat/completions', async (request, reply) => {
    const context = requestContextOf(request, reply);
    const cacheMode = cacheModeOf(request.headers, dependencies.cache !== null);
    let outcome: ChatOutcome;
    try {
      outcome = await runChatCompletion(jsonBodyOf(request.body), context, dependencies, cacheMode);
    } catch (error) {
      throw context.abort.aborted ? clientClosedRequest() : error;
    }
    if (outcome.kind === 'cached') {
      const { cached } = outcome;
      request.logFields = { provider: cached.provider, model: cached.model, cache: 'hit' };
      const type = cached.kind === 'json' ? 'application/json; charset=utf-8' : 'text/event-stream; charset=utf-8';
      return reply.header('x-cache', 'HIT').header('content-type', type).send(cached.body);
    }
    request.logFields = { provider: outcome.target.adapter.name, model: outcome.target.model };
    if (outcome.attempts.length > 1) request.logFields['attempts'] = outcome.attempts;
    // Slots are held until the response has ended, whether it finished or the client left.
    context.abort.whenClosed(outcome.admission.release);
    reply.headers(outcome.admission.headers);
    if (outcome.kind === 'json') {
      return reply.header('content-type', 'application/json; charset=utf-8').send(outcome.body);
    }
    await streamOutcome(request, reply, outcome, context.abort);
    return reply;
  });
}

function streamOutcome(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: Extract<ChatOutcome, { kind: 'stream' }>,
  abort: ClientAbort,
): Promise<RelayResult> {
  const { chunkOptions } = outcome;
  const stream = { upstream: outcome.upstream, renderer: new ChatRenderer(chunkOptions), provider: chunkOptions.provider };
  return sendStream(request, reply, streamHeaders, stream, abort, outcome.finish);
}
