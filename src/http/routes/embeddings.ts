import type { FastifyInstance } from 'fastify';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { runEmbeddings } from '../../gateway/endpoints/embeddings.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';

/** `POST /v1/embeddings` (OpenAI's shape, any provider that serves it). */
export function registerEmbeddingsRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies): void {
  app.post('/v1/embeddings', async (request, reply) => {
    const context = requestContextOf(request, reply);
    const outcome = await runEmbeddings(jsonBodyOf(request.body), context, dependencies).catch((error: unknown) => {
      throw context.signal.aborted ? clientClosedRequest() : error;
    });
    request.logFields = { provider: outcome.target.adapter.name, model: outcome.target.model };
    if (outcome.attempts.length > 1) request.logFields['attempts'] = outcome.attempts;
    context.abort.whenClosed(outcome.admission.release);
    reply.headers(outcome.admission.headers);
    return reply.header('content-type', 'application/json; charset=utf-8').send(outcome.result.body);
  });
}
