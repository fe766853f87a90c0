import { cacheModeOf } from './cache-mode.ts';
import { listedModelAllowed } from '../../auth/allowlist.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CachedResponse } from '../../cache/response-cache.ts';
import { toChatRequest } from '../../dialects/gemini/convert-request.ts';
import { runCountTokens } from '../../gateway/gemini/count-tokens.ts';
import { toGenerateContentResponse } from '../../dialects/gemini/convert-response.ts';
import { toEmbeddingsRequest, toEmbedResponse } from '../../dialects/gemini/embed.ts';
import { modelMethodOf, type ModelMethod } from '../../dialects/gemini/model-path.ts';
import { toGeminiModel } from '../../gateway/gemini/models.ts';
import { GeminiStreamRenderer, type Framing } from '../../dialects/gemini/stream-renderer.ts';
import { GeminiStreamTranslator } from '../../dialects/gemini/stream-translator.ts';
import { isObject } from '../../dialects/gemini/wire.ts';
import { notFound } from '../../errors/gateway-error.ts';
import { readChatRequest } from '../../gateway/chat-request.ts';
import type { CallResult } from '../../gateway/endpoints/chat.ts';
import { generateContentCodec, streamGenerateContentCodec } from '../../gateway/endpoints/gemini.ts';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { runModelRequest, type ModelOutcome, type StreamOutcome } from '../../gateway/run-model-request.ts';
import { runEmbeddings } from '../../gateway/endpoints/embeddings.ts';
import { listModels, lookUpModel, modelIdOf } from '../../gateway/model-lookup.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import { assertModelNameLength } from '../../routing/model-name.ts';
import type { VirtualModels } from '../../routing/virtual-models.ts';
import { clientClosedRequest, type ClientAbort } from '../client-abort.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';
import { tokenCountHeader } from './messages-count-tokens.ts';
import { sendStream } from './stream-headers.ts';
import type { RelayResult } from '../../streaming/relay.ts';
import { settle } from './model-reply.ts';
import { assertCachedContentVisible } from '../../gateway/relay/gemini-resources.ts';
import type { OwnershipStore } from '../../ownership/ownership-store.ts';

const jsonType = 'application/json; charset=utf-8';
const sseHeaders = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

type Handler = (request: FastifyRequest, reply: FastifyReply, model: string) => Promise<unknown>;

/**
 * Google's Gemini API dialect: `POST /v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent` (`?alt=sse` for SSE, else a streamed JSON array),
 * `:countTokens` (the gateway's estimate), `:embedContent` and `:batchEmbedContents`, also
 * under `/v1/`. `{model}` is a gateway selector (`instance/model`, raw or percent-encoded,
 * a bare id or a virtual model). The
 * request is translated to a chat completion (or embeddings) request and runs that pipeline
 * unchanged: limits, budgets, failover, virtual models, usage and cache. Errors are
 * rendered in Google's envelope by hooks.ts.
 */
export function registerGeminiRoutes(
  app: FastifyInstance,
  dependencies: ChatPipelineDependencies,
  virtualModels: VirtualModels,
  ownership: OwnershipStore,
): void {
  const handlers: Record<ModelMethod, Handler> = {
    generateContent: (request, reply, model) => generate(request, reply, model, dependencies, null, ownership),
    streamGenerateContent: (request, reply, model) => generate(request, reply, model, dependencies, framingOf(request), ownership),
    countTokens: (request, reply, model) => countTokens(request, reply, model, dependencies),
    embedContent: (request, reply, model) => embed(request, reply, model, dependencies, false),
    batchEmbedContents: (request, reply, model) => embed(request, reply, model, dependencies, true),
  };
  const route = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const target = modelMethodOf(request.url);
    if (target === null || target.model === '') {
      throw notFound(`unknown route: ${request.method} ${request.url.split('?')[0]}`, { code: 'unknown_route' });
    }
    // The path's model is bounded before the body is read (the planner checks it again).
    assertModelNameLength(target.model);
    return handlers[target.method](request, reply, target.model);
  };
  app.post('/v1beta/models/*', route);
  app.post('/v1/models/*', route);
  registerGeminiModelRoutes(app, dependencies.catalog, virtualModels);
}

/** `GET /v1beta/models` and `/v1beta/models/{model}`: the gateway's models as Gemini `Model` resources. */
function registerGeminiModelRoutes(app: FastifyInstance, catalog: ModelCatalog, virtualModels: VirtualModels): void {
  app.get('/v1beta/models', async (request) => ({
    models: listModels(catalog, virtualModels)
      .filter((entry) => listedModelAllowed(request.principal, entry, virtualModels))
      .map(toGeminiModel),
  }));
  app.get('/v1beta/models/*', async (request) => {
    const id = modelIdOf(request.url, '/v1beta/models/');
    const entry = await lookUpModel(id.startsWith('models/') ? id.slice('models/'.length) : id, catalog, virtualModels);
    // Outside the caller's model allowlist: 404 like a model that does not exist.
    if (!listedModelAllowed(request.principal, entry, virtualModels)) {
      throw notFound(`model "${id}" is not served by any configured provider`, { code: 'model_not_found', param: 'model' });
    }
    return toGeminiModel(entry);
  });
}

function framingOf(request: FastifyRequest): Framing {
  const query = request.query;
  return isObject(query) && query['alt'] === 'sse' ? 'sse' : 'json';
}

async function generate(
  request: FastifyRequest,
  reply: FastifyReply,
  model: string,
  dependencies: ChatPipelineDependencies,
  framing: Framing | null,
  ownership: OwnershipStore,
): Promise<FastifyReply> {
  const body = jsonBodyOf(request.body);
  const chat = toChatRequest(body, model, framing !== null);
  const context = requestContextOf(request, reply);
  // A `cachedContent` named must be the caller's (ADR 41), whatever the instance that runs.
  await assertCachedContentVisible(dependencies.catalog, ownership, context, body);
  const codec = framing === null ? generateContentCodec : streamGenerateContentCodec;
  const cacheMode = cacheModeOf(request.headers, dependencies.cache !== null);
  let outcome: ModelOutcome<CallResult>;
  try {
    outcome = await runModelRequest(codec, readChatRequest(chat), context, dependencies, cacheMode);
  } catch (error) {
    throw context.abort.aborted ? clientClosedRequest() : error;
  }
  if (outcome.kind === 'cached') {
    request.logFields = { provider: outcome.cached.provider, model: outcome.cached.model, cache: 'hit' };
    return sendCached(reply.header('x-cache', 'HIT'), outcome.cached, model, request.id, framing);
  }
  settle(request, reply, outcome, context.abort);
  if (outcome.kind === 'json') {
    const parsed: unknown = JSON.parse(outcome.body);
    const body = toGenerateContentResponse(isObject(parsed) ? parsed : {}, outcome.target.model, request.id);
    return reply.header('content-type', jsonType).send(JSON.stringify(body));
  }
  await streamOutcome(request, reply, outcome, framing ?? 'sse', context.abort);
  return reply;
}

/** A cache hit: chat JSON translated again, or the Gemini SSE chunks the first client got. */
function sendCached(reply: FastifyReply, cached: CachedResponse, model: string, requestId: string, framing: Framing | null): FastifyReply {
  if (cached.kind === 'json') {
    const parsed: unknown = JSON.parse(cached.body);
    return reply
      .header('content-type', jsonType)
      .send(JSON.stringify(toGenerateContentResponse(isObject(parsed) ? parsed : {}, model, requestId)));
  }
  if (framing !== 'json') return reply.headers(sseHeaders).send(cached.body);
  const chunks = cached.body
    .split('\r\n\r\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
  return reply.header('content-type', jsonType).send(`[${chunks.join(',\r\n')}]`);
}

function streamOutcome(
  request: FastifyRequest,
  reply: FastifyReply,
  outcome: StreamOutcome<CallResult>,
  framing: Framing,
  abort: ClientAbort,
): Promise<RelayResult> | undefined {
  const stream = outcome.result;
  if (stream.kind !== 'stream') return undefined;
  const type = framing === 'sse' ? sseHeaders : { 'content-type': jsonType, 'cache-control': 'no-cache' };
  const provider = stream.chunkOptions.provider;
  const translator = new GeminiStreamTranslator({ model: outcome.target.model, fallbackId: request.id });
  const renderer = new GeminiStreamRenderer(translator, provider, framing, outcome.captureLimit);
  return sendStream(request, reply, type, { upstream: stream.body, renderer, provider }, abort, (result) => outcome.finish(result));
}

async function embed(
  request: FastifyRequest,
  reply: FastifyReply,
  model: string,
  dependencies: ChatPipelineDependencies,
  batch: boolean,
): Promise<FastifyReply> {
  const body = toEmbeddingsRequest(jsonBodyOf(request.body), model, batch);
  const context = requestContextOf(request, reply);
  const outcome = await runEmbeddings(body, context, dependencies).catch((error: unknown) => {
    throw context.signal.aborted ? clientClosedRequest() : error;
  });
  settle(request, reply, outcome, context.abort);
  return reply.header('content-type', jsonType).send(JSON.stringify(toEmbedResponse(outcome.result.body, batch)));
}

async function countTokens(
  request: FastifyRequest,
  reply: FastifyReply,
  model: string,
  dependencies: ChatPipelineDependencies,
): Promise<FastifyReply> {
  const context = requestContextOf(request, reply);
  const outcome = await runCountTokens(jsonBodyOf(request.body), model, context, dependencies).catch((error: unknown) => {
    throw context.signal.aborted ? clientClosedRequest() : error;
  });
  // Counting reads no model output and costs nothing: the record carries no usage (recorded by the pipeline).
  context.abort.whenClosed(outcome.admission.release);
  request.logFields = { provider: outcome.target.adapter.name, model: outcome.target.model };
  reply.headers(outcome.admission.headers).header(tokenCountHeader, 'estimate');
  return reply.header('content-type', jsonType).send(outcome.result);
}
