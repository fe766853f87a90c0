import { cacheModeOf } from './cache-mode.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CachedResponse } from '../../cache/response-cache.ts';
import { MessagesStreamRenderer } from '../../dialects/anthropic-messages/stream-renderer.ts';
import { sendStream, streamHeaders } from './stream-headers.ts';
import { MessagesStreamTranslator } from '../../dialects/anthropic-messages/stream-translator.ts';
import { messagesCodec, readMessagesRequest, type MessagesRequest, type MessagesResult } from '../../gateway/endpoints/messages.ts';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { runModelRequest, type StreamOutcome } from '../../gateway/run-model-request.ts';
import type { RelayResult } from '../../streaming/relay.ts';
import type { StreamRenderer } from '../../streaming/renderer.ts';
import { NativeMessagesRenderer } from '../../dialects/anthropic-messages/native-stream-renderer.ts';
import { clientClosedRequest, type ClientAbort } from '../client-abort.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';
import { messagesApiHeaders, registerCountTokensRoute } from './messages-count-tokens.ts';
import { settle } from './model-reply.ts';
import { assertMessageFilesVisible } from '../../gateway/relay/anthropic-resources.ts';
import type { OwnershipStore } from '../../ownership/ownership-store.ts';

const endpoint = '/v1/messages';
const jsonType = 'application/json; charset=utf-8';

/**
 * `POST /v1/messages`: Anthropic's Messages dialect in and out, any provider behind
 * (gateway/endpoints/messages.ts): instances that speak it get the request natively and their answer is
 * relayed as is; others get it translated to a chat completion and the answer translated
 * back. Rate limits, budgets, failover, virtual models, usage and cache are the chat
 * pipeline's. Errors are rendered in Anthropic's envelope by hooks.ts, which also sends the
 * `request-id` header the Anthropic SDK reads. A file a content block names (`source.type:
 * "file"`) must be one the caller uploaded (404 `file_not_found` otherwise).
 */
export function registerMessagesRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies, ownership: OwnershipStore): void {
  app.post(endpoint, async (request, reply) => {
    const json = jsonBodyOf(request.body);
    const messages = readMessagesRequest(json, messagesApiHeaders(request));
    const context = requestContextOf(request, reply);
    const signal = context.signal;
    // Files named by `source.type: "file"` blocks must be the caller's (ADR 41), before any upstream call.
    await assertMessageFilesVisible(dependencies.catalog, ownership, context, json);
    const cacheMode = cacheModeOf(request.headers, dependencies.cache !== null);
    const outcome = await runModelRequest(messagesCodec, messages, context, dependencies, cacheMode).catch((error: unknown) => {
      throw signal.aborted ? clientClosedRequest() : error;
    });
    if (outcome.kind === 'cached') {
      request.logFields = { provider: outcome.cached.provider, model: outcome.cached.model, cache: 'hit' };
      return sendCached(reply, outcome.cached);
    }
    // Slots are held until the response has ended, whether it finished or the client left.
    settle(request, reply, outcome, context.abort);
    if (outcome.kind === 'json') return reply.header('content-type', jsonType).send(outcome.body);
    await streamOutcome(request, reply, outcome, messages, context.abort);
    return reply;
  });
  registerCountTokensRoute(app, dependencies);
}

/** A cache hit: the Messages JSON or events the first client received, replayed. */
function sendCached(reply: FastifyReply, cached: CachedResponse): FastifyReply {
  reply.header('x-cache', 'HIT');
  if (cached.kind === 'json') return reply.header('content-type', jsonType).send(cached.body);
  return reply.headers(streamHeaders).send(cached.body);
}

function streamOutcome(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: StreamOutcome<MessagesResult>,
  messages: MessagesRequest,
  abort: ClientAbort,
): Promise<RelayResult> | undefined {
  if (outcome.result.kind !== 'stream') return undefined;
  const provider = outcome.target.adapter.name;
  const captureLimit = outcome.captureLimit;
  const stream = outcome.result.stream;
  let renderer: StreamRenderer;
  if (stream.native) renderer = new NativeMessagesRenderer(provider, captureLimit);
  else {
    const estimatedInputTokens = messages.translate().estimatedInputTokens;
    const translator = new MessagesStreamTranslator({ model: outcome.target.model, fallbackId: request.id, estimatedInputTokens });
    renderer = new MessagesStreamRenderer(translator, provider, captureLimit);
  }
  return sendStream(request, reply, streamHeaders, { upstream: stream.upstream, renderer, provider }, abort, (result) =>
    outcome.finish(result),
  );
}
