import type { ProviderSettings } from '../provider-settings.ts';
import { providerError } from '../../errors/gateway-error.ts';
import { createOpenAICompatibleAdapter } from '../openai-compatible/adapter.ts';
import type {
  CallContext,
  ChatRequestBody,
  EmbeddingsApi,
  ForwardRequest,
  JsonResult,
  ProviderAdapter,
  StreamResult,
  UpstreamModel,
} from '../provider.ts';
import { readBody, upstreamErrorOf } from '../upstream-body.ts';
import type { UpstreamClient, UpstreamResponse } from '../upstream-client.ts';
import { toGenerateContentRequest } from './convert-chat-request.ts';
import { fromGenerateContentResponse, parseGenerateContentResponse } from './convert-chat-response.ts';
import { fromBatchEmbedResponse, toBatchEmbedRequest } from './convert-embeddings.ts';
import { googleErrorOf } from './google-errors.ts';
import { parseGeminiModelPage } from './parse-model-page.ts';
import { openConvertedStream } from './stream-body.ts';
import { isRecord } from './wire.ts';

/** Google's native API, the type's default `base_url`. */
export const GEMINI_API_BASE = 'https://generativelanguage.googleapis.com/v1beta';

/** Gemini returns at most 1000 models per page; more pages than this means a looping token. */
const pageSize = 1000;
const maximumPages = 20;

/**
 * Gemini. By default (`api: native`) chat, streaming and embeddings use the native
 * generativelanguage API (`{base}/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse`, `:batchEmbedContents`, key in `x-goog-api-key`),
 * translated from and to OpenAI's shape; OpenAI-format relays (images, audio, passthrough,
 * realtime) go to Google's OpenAI-compatible route `{base}/openai`, except passthrough
 * paths of the native API (see isNativePath). With `api: openai`
 * everything but the model listing goes through the OpenAI-compatible route.
 */
export function createGeminiAdapter(settings: ProviderSettings, client: UpstreamClient): ProviderAdapter {
  if (settings.options.api === 'openai') return createCompatibleRoute(settings, client);
  const nativeBase = nativeBaseOf(settings.baseUrl) ?? settings.baseUrl;
  const compatible = createOpenAICompatibleAdapter({ ...settings, baseUrl: `${nativeBase}/openai` }, client);
  const provider = settings.name;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (settings.apiKey !== null) headers['x-goog-api-key'] = settings.apiKey;
  const modelUrl = (model: string, method: string): URL =>
    new URL(`${nativeBase}/models/${encodeURIComponent(model.replace(/^models\//, ''))}:${method}`);

  const post = async (url: URL, body: unknown, context: CallContext): Promise<Awaited<ReturnType<UpstreamClient['request']>>> => {
    const response = await client.request({ provider, url, method: 'POST', headers, body: JSON.stringify(body), signal: context.signal });
    if (response.statusCode < 200 || response.statusCode > 299) throw await googleErrorOf(response, provider, context.signal);
    return response;
  };

  const embeddingsApi: EmbeddingsApi = {
    async create(request: ChatRequestBody, context: CallContext): Promise<string> {
      const response = await post(modelUrl(request.model, 'batchEmbedContents'), toBatchEmbedRequest(request, request.model), context);
      return JSON.stringify(fromBatchEmbedResponse(await readBody(response, provider, context.signal), request.model, provider));
    },
  };

  return {
    ...compatible,
    embeddingsApi,
    async forward(request: ForwardRequest, context: CallContext): Promise<UpstreamResponse> {
      if (request.surface === undefined && !isNativePath(request.path)) return compatible.forward(request, context);
      const { authorization: _bearer, ...rest } = request.headers;
      const base = request.surface === 'upload' ? uploadBaseOf(nativeBase) : nativeBase;
      return client.request({
        provider,
        url: new URL(`${base}/${request.path}`),
        method: request.method,
        headers: { ...rest, ...(settings.apiKey === null ? {} : { 'x-goog-api-key': settings.apiKey }) },
        body: request.body ?? null,
        signal: context.signal,
      });
    },
    async chatCompletion(request: ChatRequestBody, context: CallContext): Promise<JsonResult | StreamResult> {
      const body = toGenerateContentRequest(request);
      const created = Math.floor(Date.now() / 1000);
      if (request['stream'] === true) {
        const url = modelUrl(request.model, 'streamGenerateContent');
        url.searchParams.set('alt', 'sse');
        const response = await post(url, body, context);
        const streamOptions = request['stream_options'];
        const includeUsage = isRecord(streamOptions) && streamOptions['include_usage'] === true;
        const options = { provider, created, model: request.model, includeUsage };
        return { kind: 'stream', body: await openConvertedStream(response.body, options, context.signal) };
      }
      const response = await post(modelUrl(request.model, 'generateContent'), body, context);
      const answer = parseGenerateContentResponse(await readBody(response, provider, context.signal), provider);
      return { kind: 'json', body: JSON.stringify(fromGenerateContentResponse(answer, request.model, { created })) };
    },
    listModels: (signal: AbortSignal): Promise<UpstreamModel[]> => listNativeModels(client, provider, nativeBase, headers, signal),
  };
}

/**
 * `api: openai`: Google's OpenAI-compatible endpoint (the base URL, `.../v1beta/openai`;
 * the type's native default gets `/openai`). That endpoint's model listing is incomplete, so
 * models come from the native `GET .../v1beta/models`; a base URL that does not end in
 * `/openai` (a proxy speaking OpenAI's format) keeps the OpenAI listing.
 */
function createCompatibleRoute(settings: ProviderSettings, client: UpstreamClient): ProviderAdapter {
  const baseUrl = settings.baseUrl === GEMINI_API_BASE ? `${GEMINI_API_BASE}/openai` : settings.baseUrl;
  const compatible = createOpenAICompatibleAdapter({ ...settings, baseUrl }, client);
  const nativeBase = nativeBaseOf(baseUrl);
  if (nativeBase === null) return compatible;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (settings.apiKey !== null) headers['x-goog-api-key'] = settings.apiKey;
  return {
    ...compatible,
    listModels: (signal: AbortSignal): Promise<UpstreamModel[]> => listNativeModels(client, settings.name, nativeBase, headers, signal),
  };
}

/** Every page of the native `GET {base}/models` (the key in `x-goog-api-key`, never in the URL, where it would be logged). */
async function listNativeModels(
  client: UpstreamClient,
  provider: string,
  nativeBase: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<UpstreamModel[]> {
  const models: UpstreamModel[] = [];
  let pageToken: string | null = null;
  for (let page = 0; page < maximumPages; page += 1) {
    const url = new URL(`${nativeBase}/models`);
    url.searchParams.set('pageSize', String(pageSize));
    if (pageToken !== null) url.searchParams.set('pageToken', pageToken);
    const response = await client.request({ provider, url, method: 'GET', headers, signal });
    if (response.statusCode !== 200) throw await upstreamErrorOf(response, provider);
    const listed = parseGeminiModelPage(await readBody(response, provider, signal));
    if (listed === null)
      throw providerError(`upstream ${provider} returned an unreadable model list`, { provider, code: 'invalid_upstream_response' });
    models.push(...listed.models);
    pageToken = listed.nextPageToken;
    if (pageToken === null) break;
  }
  return models;
}

/**
 * Whether a forwarded path (passthrough `/p/{instance}/...`) is a native API call rather than
 * an OpenAI-format one: a model method (`models/{model}:generateContent`, `:countTokens`, ...)
 * or a native-only collection (`cachedContents`, `tunedModels`, `operations`).
 */
export function isNativePath(path: string): boolean {
  return /^(?:models\/[^/?]+:|(?:cachedContents|tunedModels|operations)(?:[/?]|$))/.test(path);
}

/** The resumable upload base of a native base: `https://host/v1beta` -> `https://host/upload/v1beta`. */
export function uploadBaseOf(nativeBase: string): string {
  const url = new URL(nativeBase);
  return `${url.origin}/upload${url.pathname.replace(/\/+$/, '')}`;
}

/** `https://generativelanguage.googleapis.com/v1beta/openai` -> `.../v1beta`; null without `/openai`. */
export function nativeBaseOf(baseUrl: string): string | null {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/openai') ? trimmed.slice(0, -'/openai'.length) : null;
}
