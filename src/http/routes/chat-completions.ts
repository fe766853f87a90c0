import { cacheModeOf } from './cache-mode.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { chatCompletionsCodec, type CallResult } from '../../gateway/endpoints/chat.ts';
import { readChatRequest } from '../../gateway/chat-request.ts';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { runModelRequest, type ModelOutcome, type StreamOutcome } from '../../gateway/run-model-request.ts';
import { requestContextOf } from '../request-context.ts';
import { ChatRenderer, type ChatRenderOptions } from '../../streaming/chat-renderer.ts';
import type { RelayResult } from '../../streaming/relay.ts';
import { jsonBodyOf } from '../json-body.ts';
import { clientClosedRequest, type ClientAbort } from '../client-abort.ts';
import { sendStream, streamHeaders } from './stream-headers.ts';
import { settle } from './model-reply.ts';
import { assertCachedContentVisible } from '../../gateway/relay/gemini-resources.ts';
import { jsonObjectOf } from '../../gateway/relay/owned-resources.ts';
import { storedCompletionRecorder } from '../../gateway/stored-chat-completion.ts';
import type { OwnershipStore } from '../../ownership/ownership-store.ts';

/**
 * `POST /v1/chat/completions`, JSON or SSE. The answer to a request with `store: true` on an
 * OpenAI-type instance is recorded as the caller's stored chat completion (read back through the
 * catalogue's `/v1/chat/completions/{id}`, owned-relay.ts): a JSON answer's `id` before it is
 * sent, a stream's chunk `id` once it ended well and before its last bytes reach the client.
 */
export function registerChatRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies, ownership?: OwnershipStore): void {
  app.post('/v1/chat/completions', async (request, reply) => {
    const context = requestContextOf(request, reply);
    const cacheMode = cacheModeOf(request.headers, dependencies.cache !== null);
    const body = jsonBodyOf(request.body);
    // Google's `google.cached_content` (sent to Gemini instances) must name the caller's cached content (ADR 41).
    const google = (body as { google?: unknown } | null)?.google;
    const named = typeof google === 'object' && google !== null ? (google as { cached_content?: unknown }).cached_content : undefined;
    // Only a request that names one waits for the store: every other chat request goes on at once.
    if (ownership !== undefined && named !== undefined) {
      await assertCachedContentVisible(dependencies.catalog, ownership, context, { cachedContent: named });
    }
    let outcome: ModelOutcome<CallResult>;
    try {
      outcome = await runModelRequest(chatCompletionsCodec, readChatRequest(body), context, dependencies, cacheMode);
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
    const record = storedCompletionRecorder(ownership, context, body, outcome.target.adapter, request.log);
    if (outcome.kind === 'json') {
      if (record !== null) {
        const id = jsonObjectOf(outcome.body)?.['id'];
        if (typeof id === 'string') await record(id);
      }
      return reply.header('content-type', 'application/json; charset=utf-8').send(outcome.body);
    }
    await streamOutcome(request, reply, outcome, context.abort, record);
    return reply;
  });
}

function streamOutcome(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: StreamOutcome<CallResult>,
  abort: ClientAbort,
  record: ((id: string) => Promise<void>) | null,
): Promise<RelayResult> | undefined {
  const stream = outcome.result;
  if (stream.kind !== 'stream') return undefined;
  // Built field by field: in V8 11 a spread followed by more fields costs microseconds (ADR 0003).
  const chunkOptions: ChatRenderOptions = stream.chunkOptions;
  if (outcome.captureLimit !== undefined) chunkOptions.captureLimit = outcome.captureLimit;
  const renderer = new ChatRenderer(chunkOptions);
  if (record !== null) renderer.whenCompleted(record);
  const answer = { upstream: stream.body, renderer, provider: chunkOptions.provider };
  return sendStream(request, reply, streamHeaders, answer, abort, (result) => outcome.finish(result));
}
