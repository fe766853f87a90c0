import type { FastifyInstance } from 'fastify';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { runAudioUpload, runSpeech, type AudioUpload } from '../../gateway/endpoints/audio.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';
import { relayModelCall } from './relay-reply.ts';

/**
 * OpenAI's audio endpoints, routed by model like chat: `POST /v1/audio/speech` (JSON in,
 * audio streamed back with its content type) and `POST /v1/audio/transcriptions` and
 * `/v1/audio/translations` (multipart upload in, json/text/srt/vtt or SSE back).
 */
export function registerAudioRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies): void {
  app.post('/v1/audio/speech', async (request, reply) => {
    const context = requestContextOf(request, reply);
    const outcome = await runSpeech(jsonBodyOf(request.body), context, dependencies).catch((error: unknown) => {
      throw context.signal.aborted ? clientClosedRequest() : error;
    });
    await relayModelCall(request, reply, outcome, context.abort);
    return reply;
  });
  for (const kind of ['transcriptions', 'translations'] satisfies AudioUpload[]) {
    app.post(`/v1/audio/${kind}`, async (request, reply) => {
      const context = requestContextOf(request, reply);
      const contentType = request.headers['content-type'];
      const outcome = await runAudioUpload(kind, request.body, contentType, context, dependencies).catch((error: unknown) => {
        throw context.signal.aborted ? clientClosedRequest() : error;
      });
      await relayModelCall(request, reply, outcome, context.abort);
      return reply;
    });
  }
}
