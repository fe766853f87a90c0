import type { ProviderSettings } from '../provider-settings.ts';
import { isJsonObject as isRecord } from '../../core/json.ts';
import { GatewayError, invalidRequest } from '../../errors/gateway-error.ts';
import { convertChatResponse, parseMessagesResponse } from '../anthropic/convert-chat-response.ts';
import { openNativeStream } from '../anthropic/messages-api.ts';
import { openConvertedStream } from '../anthropic/stream-body.ts';
import type {
  CallContext,
  ChatRequestBody,
  EmbeddingsApi,
  ForwardRequest,
  JsonResult,
  MessagesApi,
  MessagesApiRequest,
  MessagesApiResult,
  ProviderAdapter,
  StreamResult,
  UpstreamModel,
} from '../provider.ts';
import { toGenerateContentRequest } from '../gemini/convert-chat-request.ts';
import { fromGenerateContentResponse, parseGenerateContentResponse } from '../gemini/convert-chat-response.ts';
import { googleErrorOf } from '../gemini/google-errors.ts';
import { openConvertedStream as openGeminiStream } from '../gemini/stream-body.ts';
import { readBody } from '../upstream-body.ts';
import type { UpstreamClient, UpstreamResponse } from '../upstream-client.ts';
import { createTokenSource, type VertexTokenSource } from './auth.ts';
import { chatToRawPredict, toRawPredictBody, vertexMessagesHeaders } from './claude.ts';
import { fromPredictResponse, toPredictRequest } from './convert-embeddings.ts';
import { claudeUrl, DEFAULT_LOCATION, geminiUrl, modelUrl, publisherOf, vertexOrigin, type VertexLocation } from './urls.ts';

/** What a call needs: the resolved location and the headers with a fresh token. */
interface Transport {
  where(): Promise<VertexLocation>;
  headers(accept: string): Promise<Record<string, string>>;
  post(url: URL, body: unknown, accept: string, context: CallContext, extra?: Record<string, string>): Promise<UpstreamResponse>;
}

/**
 * Google Vertex AI: Gemini models through `generateContent` / `streamGenerateContent` (the
 * native Gemini provider's converters, so thinking, tools, safety ratings and usage behave as
 * on `gemini` instances), Claude
 * models (ids starting with `claude`) through the Anthropic publisher's `rawPredict` /
 * `streamRawPredict`, embeddings through `predict`. Calls carry an OAuth access token of the
 * instance's service account (or application default credentials), cached and refreshed by
 * google-auth-library. Models are the configured ones (Vertex lists no publisher models).
 */
export function createVertexAdapter(settings: ProviderSettings, client: UpstreamClient): ProviderAdapter {
  const provider = settings.name;
  const tokens = createTokenSource({
    provider,
    ...(settings.options.credentialsJson === undefined ? {} : { credentialsJson: settings.options.credentialsJson }),
  });
  const transport = createTransport(settings, client, tokens);
  const location = settings.options.location ?? DEFAULT_LOCATION;
  return {
    name: provider,
    type: settings.type,
    baseUrl: settings.baseUrl === '' ? vertexOrigin(location) : settings.baseUrl,
    // Tokens are fetched per call; realtime has no Vertex equivalent.
    credentialHeaders: () => ({}),
    messagesApi: createVertexMessagesApi(transport, provider),
    embeddingsApi: createVertexEmbeddingsApi(transport, provider),

    chatCompletion: (request: ChatRequestBody, context: CallContext): Promise<JsonResult | StreamResult> =>
      publisherOf(request.model) === 'anthropic'
        ? claudeChat(transport, provider, request, context)
        : geminiChat(transport, provider, request, context),

    listModels: (): Promise<UpstreamModel[]> => Promise.resolve((settings.models ?? []).map((id) => ({ id }))),

    async forward(request: ForwardRequest, context: CallContext): Promise<UpstreamResponse> {
      const where = await transport.where();
      return client.request({
        provider,
        url: new URL(`${where.origin}/${request.path}`),
        method: request.method,
        headers: { ...request.headers, ...(await transport.headers('application/json')) },
        body: request.body ?? null,
        signal: context.signal,
      });
    },
  };
}

function createTransport(settings: ProviderSettings, client: UpstreamClient, tokens: VertexTokenSource): Transport {
  const provider = settings.name;
  const location = settings.options.location ?? DEFAULT_LOCATION;
  const origin = settings.baseUrl === '' ? vertexOrigin(location) : settings.baseUrl;
  let resolved: VertexLocation | null = null;
  const where = async (): Promise<VertexLocation> => {
    if (resolved !== null) return resolved;
    const project = settings.options.project ?? (await tokens.projectId());
    if (project === null || project === '') {
      throw new GatewayError('provider_error', `vertex instance ${provider} has no project: set its project (or GOOGLE_CLOUD_PROJECT)`, {
        provider,
        status: 500,
        code: 'upstream_error',
      });
    }
    resolved = { project, location, origin };
    return resolved;
  };
  const headers = async (accept: string): Promise<Record<string, string>> => ({
    'content-type': 'application/json',
    accept,
    authorization: `Bearer ${await tokens.token()}`,
  });
  return {
    where,
    headers,
    async post(url, body, accept, context, extra = {}) {
      const text = JSON.stringify(body);
      const send = async (token: string): Promise<UpstreamResponse> =>
        client.request({
          provider,
          url,
          method: 'POST',
          headers: { ...extra, 'content-type': 'application/json', accept, authorization: `Bearer ${token}` },
          body: text,
          signal: context.signal,
        });
      const token = await tokens.token();
      let response = await send(token);
      if (response.statusCode === 401) {
        // A token refused before its time (revoked, clock skew): one retry with a fresh one.
        const refused = await googleErrorOf(response, provider, context.signal);
        await tokens.invalidate(token);
        const fresh = await tokens.token();
        if (fresh === token) throw refused;
        response = await send(fresh);
      }
      if (response.statusCode < 200 || response.statusCode > 299) throw await googleErrorOf(response, provider, context.signal);
      return response;
    },
  };
}

const includesUsage = (request: ChatRequestBody): boolean =>
  isRecord(request['stream_options']) && request['stream_options']['include_usage'] === true;

async function geminiChat(
  transport: Transport,
  provider: string,
  request: ChatRequestBody,
  context: CallContext,
): Promise<JsonResult | StreamResult> {
  const stream = request['stream'] === true;
  const body = toGenerateContentRequest(request);
  const url = geminiUrl(await transport.where(), request.model, stream);
  const response = await transport.post(url, body, stream ? 'text/event-stream' : 'application/json', context);
  const created = Math.floor(Date.now() / 1000);
  if (stream) {
    const options = { provider, created, model: request.model, includeUsage: includesUsage(request) };
    return { kind: 'stream', body: await openGeminiStream(response.body, options, context.signal) };
  }
  const answer = parseGenerateContentResponse(await readBody(response, provider, context.signal), provider);
  return { kind: 'json', body: JSON.stringify(fromGenerateContentResponse(answer, request.model, { created })) };
}

async function claudeChat(
  transport: Transport,
  provider: string,
  request: ChatRequestBody,
  context: CallContext,
): Promise<JsonResult | StreamResult> {
  const body = chatToRawPredict(request, provider);
  const stream = body['stream'] === true;
  const url = claudeUrl(await transport.where(), request.model, stream);
  const response = await transport.post(url, body, stream ? 'text/event-stream' : 'application/json', context);
  const created = Math.floor(Date.now() / 1000);
  if (stream) {
    const options = { provider, created, model: request.model, includeUsage: includesUsage(request) };
    return { kind: 'stream', body: await openConvertedStream(response.body, options, context.signal) };
  }
  const message = parseMessagesResponse(await readBody(response, provider, context.signal), provider);
  return { kind: 'json', body: JSON.stringify(convertChatResponse(message, { created, model: request.model })) };
}

/** `/v1/messages` for Claude models, untranslated: the Messages body goes to rawPredict as Vertex takes it. */
function createVertexMessagesApi(transport: Transport, provider: string): MessagesApi {
  const modelOf = (request: MessagesApiRequest): string => String(request.body['model'] ?? '');
  return {
    serves: (model: string) => publisherOf(model) === 'anthropic',
    async create(request: MessagesApiRequest, context: CallContext): Promise<MessagesApiResult> {
      const stream = request.body['stream'] === true;
      const url = claudeUrl(await transport.where(), modelOf(request), stream);
      const accept = stream ? 'text/event-stream' : 'application/json';
      const response = await transport.post(url, toRawPredictBody(request.body), accept, context, vertexMessagesHeaders(request));
      if (!stream) return { kind: 'json', body: await readBody(response, provider, context.signal) };
      return { kind: 'stream', body: await openNativeStream(response.body, provider, context.signal) };
    },
    // Vertex counts Claude tokens at the `count-tokens` model's rawPredict, the model named in the body.
    async countTokens(request: MessagesApiRequest, context: CallContext): Promise<string> {
      const url = modelUrl(await transport.where(), 'anthropic', 'count-tokens', 'rawPredict');
      const body = { ...toRawPredictBody(request.body), model: modelOf(request) };
      const response = await transport.post(url, body, 'application/json', context, vertexMessagesHeaders(request));
      return readBody(response, provider, context.signal);
    },
  };
}

/** `/v1/embeddings` through the model's `:predict` (text-embedding-005, gemini-embedding-001, ...). */
function createVertexEmbeddingsApi(transport: Transport, provider: string): EmbeddingsApi {
  return {
    async create(request: ChatRequestBody, context: CallContext): Promise<string> {
      if (publisherOf(request.model) === 'anthropic') {
        throw invalidRequest(`model ${request.model} has no embeddings on ${provider}`, { param: 'model', code: 'unsupported_parameter' });
      }
      const url = modelUrl(await transport.where(), 'google', request.model, 'predict');
      const response = await transport.post(url, toPredictRequest(request, provider), 'application/json', context);
      return JSON.stringify(fromPredictResponse(await readBody(response, provider, context.signal), request.model, provider));
    },
  };
}
