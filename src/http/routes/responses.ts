import type { FastifyInstance } from 'fastify';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { createResponsesPipeline } from '../../gateway/endpoints/responses.ts';
import { betaSignalsOf } from '../../gateway/responses/beta-signals.ts';
import type { ResponseState } from '../../responses/response-state.ts';
import type { OwnershipStore } from '../../ownership/ownership-store.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';
import { registerStoredResponseRoutes } from './stored-responses.ts';
import { sendStream, streamHeaders } from './stream-headers.ts';
import { settle } from './model-reply.ts';

/**
 * `POST /v1/responses` (OpenAI's Responses API, JSON or SSE, any provider behind), and the
 * stored responses the gateway created through the chat translation: `GET` and `DELETE
 * /v1/responses/{id}`, `GET /v1/responses/{id}/input_items`. Without a store every id is a 404.
 */
export function registerResponsesRoutes(
  app: FastifyInstance,
  dependencies: ChatPipelineDependencies,
  state: ResponseState | null = null,
  ownership: OwnershipStore | null = null,
): void {
  const run = createResponsesPipeline(dependencies, state, ownership);
  app.post('/v1/responses', async (request, reply) => {
    const context = requestContextOf(request, reply);
    const beta = betaSignalsOf(request.headers['openai-beta'], request.url);
    const outcome = await run(jsonBodyOf(request.body), context, beta).catch((error: unknown) => {
      throw context.signal.aborted ? clientClosedRequest() : error;
    });
    const provider = outcome.target.adapter.name;
    // Slots are held until the response has ended, whether it finished or the client left.
    settle(request, reply, outcome, context.abort);
    if (outcome.kind === 'json') return reply.header('content-type', 'application/json; charset=utf-8').send(outcome.body);
    const result = outcome.result;
    if (result.kind !== 'stream') return reply;
    const stream = { upstream: result.upstream, renderer: result.translator, provider };
    await sendStream(request, reply, streamHeaders, stream, context.abort, (relay) => outcome.finish(relay));
    return reply;
  });
  registerStoredResponseRoutes(app, state, dependencies.catalog);
}
