import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cacheDirectives } from '../../cache/cache-key.ts';
import type { CachedResponse } from '../../cache/response-cache.ts';
import { toChatRequest, type TranslatedRequest } from '../../dialects/anthropic-messages/convert-request.ts';
import { toMessagesResponse } from '../../dialects/anthropic-messages/convert-response.ts';
import { relayMessagesStream, translateCapturedStream } from '../../dialects/anthropic-messages/stream-relay.ts';
import { MessagesStreamTranslator } from '../../dialects/anthropic-messages/stream-translator.ts';
import { runChatCompletion, type CacheMode, type ChatOutcome, type ChatPipelineDependencies } from '../../gateway/chat-completions.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';

const endpoint = '/v1/messages';
const jsonType = 'application/json; charset=utf-8';
const streamHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** What the client's Cache-Control allows: `no-cache` skips the lookup, `no-store` both. */
function cacheModeOf(request: FastifyRequest, cacheEnabled: boolean): CacheMode {
  if (!cacheEnabled) return { lookup: false, store: false };
  const directives = cacheDirectives(request.headers);
  return { lookup: !directives.noCache && !directives.noStore, store: !directives.noStore };
}

/**
 * `POST /v1/messages`: Anthropic's Messages dialect in and out, any provider behind. The
 * request is translated to a chat completion and runs the chat pipeline unchanged (rate
 * limits, budgets, failover, virtual models, usage, cache); the answer, streamed or not,
 * cached or not, is translated back. Errors are rendered in Anthropic's envelope by hooks.ts.
 */
export function registerMessagesRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies): void {
  app.post(endpoint, async (request, reply) => {
    const translated = toChatRequest(jsonBodyOf(request.body));
    const context = requestContextOf(request, reply);
    const signal = context.signal;
    const cacheMode = cacheModeOf(request, dependencies.cache !== null);
    const outcome = await runChatCompletion(translated.chat, context, dependencies, cacheMode, endpoint).catch((error: unknown) => {
      throw signal.aborted ? clientClosedRequest() : error;
    });
    if (outcome.kind === 'cached') {
      request.logFields = { provider: outcome.cached.provider, model: outcome.cached.model, cache: 'hit' };
      return sendCached(reply, outcome.cached, translated, request.id);
    }
    request.logFields = { provider: outcome.target.adapter.name, model: outcome.target.model };
    if (outcome.attempts.length > 1) request.logFields['attempts'] = outcome.attempts;
    // Slots are held until the response has ended, whether it finished or the client left.
    context.abort.whenClosed(outcome.admission.release);
    reply.headers(outcome.admission.headers);
    if (outcome.kind === 'json') {
      const message = toMessagesResponse(outcome.body, outcome.target.model, request.id);
      return reply.header('content-type', jsonType).send(JSON.stringify(message));
    }
    await streamOutcome(request, reply, outcome, translated, signal);
    return reply;
  });
}

function translatorFor(translated: TranslatedRequest, model: string, requestId: string): MessagesStreamTranslator {
  return new MessagesStreamTranslator({ model, fallbackId: requestId, estimatedInputTokens: translated.estimatedInputTokens });
}

/** A cache hit in Anthropic's shape: the stored chat answer (JSON or OpenAI SSE) translated. */
function sendCached(reply: FastifyReply, cached: CachedResponse, translated: TranslatedRequest, requestId: string): FastifyReply {
  reply.header('x-cache', 'HIT');
  if (cached.kind === 'json') {
    const message = toMessagesResponse(cached.body, cached.model, requestId);
    return reply.header('content-type', jsonType).send(JSON.stringify(message));
  }
  const events = translateCapturedStream(cached.body, translatorFor(translated, cached.model, requestId));
  return reply.headers(streamHeaders).send(events);
}

async function streamOutcome(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: Extract<ChatOutcome, { kind: 'stream' }>,
  translated: TranslatedRequest,
  signal: AbortSignal,
): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), ...streamHeaders });
  const translator = translatorFor(translated, outcome.target.model, request.id);
  const { provider, captureLimit } = outcome.chunkOptions;
  const relayOptions = captureLimit === undefined ? { provider } : { provider, captureLimit };
  const result = await relayMessagesStream(outcome.upstream, raw, translator, relayOptions, signal);
  outcome.finish(result);
  // Fastify's onResponse hook writes the request's log line, hijacked or not.
  const ending = result.error !== null ? 'upstream_error' : result.clientClosed ? 'client_closed' : 'completed';
  request.logFields = { ...request.logFields, stream: true, stream_end: ending };
  if (result.error !== null)
    request.log.warn({ request_id: request.id, ...request.logFields, reason: String(result.error) }, 'stream broken by upstream');
}
