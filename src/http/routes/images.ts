import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import type { ExecutedOutcome } from '../../gateway/endpoints/call-codec.ts';
import { runImageGeneration, runImageUpload, type ImageResult, type ImageUpload } from '../../gateway/endpoints/images.ts';
import type { ClientAbort } from '../client-abort.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';
import { relayEventStream, sendJsonAnswer } from './model-reply.ts';

/**
 * OpenAI's image endpoints, routed by model like chat: `POST /v1/images/generations` (JSON)
 * and `/v1/images/edits` and `/v1/images/variations` (multipart uploads). JSON answers are
 * read whole; a stream (`stream: true`) is relayed as it arrives. Usage is metered from both.
 */
export function registerImageRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies): void {
  app.post('/v1/images/generations', async (request, reply) => {
    const context = requestContextOf(request, reply);
    const outcome = await runImageGeneration(jsonBodyOf(request.body), context, dependencies).catch((error: unknown) => {
      throw context.abort.aborted ? clientClosedRequest() : error;
    });
    return answer(request, reply, outcome, context.abort);
  });
  for (const kind of ['edits', 'variations'] satisfies ImageUpload[]) {
    app.post(`/v1/images/${kind}`, async (request, reply) => {
      const context = requestContextOf(request, reply);
      const contentType = request.headers['content-type'];
      const outcome = await runImageUpload(kind, request.body, contentType, context, dependencies).catch((error: unknown) => {
        throw context.abort.aborted ? clientClosedRequest() : error;
      });
      return answer(request, reply, outcome, context.abort);
    });
  }
}

async function answer(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: ExecutedOutcome<ImageResult>,
  abort: ClientAbort,
): Promise<FastifyReply> {
  if (outcome.kind === 'json') return sendJsonAnswer(request, reply, outcome, abort);
  if (outcome.result.kind === 'stream') await relayEventStream(request, reply, outcome, outcome.result.response, abort);
  return reply;
}
