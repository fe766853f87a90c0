import type { FastifyInstance } from 'fastify';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { runEmbeddings } from '../../gateway/endpoints/embeddings.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';
import { settle } from './model-reply.ts';

/** `POST /v1/embeddings` (OpenAI's shape, any provider that serves it). */
export function registerEmbeddingsRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies): void {
  app.post('/v1/embeddings', async (request, reply) => {
    const context = requestContextOf(request, reply);
    const outcome = await runEmbeddings(jsonBodyOf(request.body), context, dependencies).catch((error: unknown) => {
      throw context.signal.aborted ? clientClosedRequest() : error;
    });
    settle(request, reply, outcome, context.abort);
    return reply.header('content-type', 'application/json; charset=utf-8').send(outcome.result.body);
  });
}
