import type { FastifyInstance } from 'fastify';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { runCompletion, runModeration } from '../../gateway/endpoints/completions.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';
import { relaySseAnswer, sendJsonAnswer } from './model-reply.ts';

/** `POST /v1/completions` (legacy, JSON or SSE) and `POST /v1/moderations`, routed by model like chat. */
export function registerCompletionRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies): void {
  app.post('/v1/completions', async (request, reply) => {
    const context = requestContextOf(request, reply);
    const outcome = await runCompletion(jsonBodyOf(request.body), context, dependencies).catch((error: unknown) => {
      throw context.abort.aborted ? clientClosedRequest() : error;
    });
    if (outcome.kind === 'json') return sendJsonAnswer(request, reply, outcome, context.abort);
    if (outcome.result.kind === 'stream') await relaySseAnswer(request, reply, outcome, outcome.result, context.abort);
    return reply;
  });
  app.post('/v1/moderations', async (request, reply) => {
    const context = requestContextOf(request, reply);
    const outcome = await runModeration(jsonBodyOf(request.body), context, dependencies).catch((error: unknown) => {
      throw context.abort.aborted ? clientClosedRequest() : error;
    });
    if (outcome.kind === 'json') return sendJsonAnswer(request, reply, outcome, context.abort);
    return reply;
  });
}
