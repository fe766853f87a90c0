import type { ProviderSettings } from '../provider-settings.ts';
import { providerError } from '../../errors/gateway-error.ts';
import type {
  CallContext,
  ChatRequestBody,
  ForwardRequest,
  JsonResult,
  ProviderAdapter,
  StreamResult,
  UpstreamModel,
} from '../provider.ts';
import { readBody, upstreamErrorOf } from '../upstream-body.ts';
import type { UpstreamClient, UpstreamResponse } from '../upstream-client.ts';
import { createMessagesApi } from './messages-api.ts';
import { convertChatRequest } from './convert-chat-request.ts';
import { convertChatResponse, parseMessagesResponse } from './convert-chat-response.ts';
import { parseModelPage } from './parse-model-list.ts';
import { openConvertedStream } from './stream-body.ts';
import { ANTHROPIC_VERSION, isRecord } from './wire.ts';

/** Pages of `GET /models` read at most (1000 models each). */
const maximumModelPages = 10;

/**
 * The native Anthropic adapter: chat completions are translated to the Messages API and the
 * answers (JSON or SSE) back to OpenAI's shape, so the rest of the gateway sees one dialect.
 * `forward` (passthrough, relays) sends requests as they are, with the instance's
 * credentials; `messagesApi` serves `/v1/messages` natively.
 */
export function createAnthropicAdapter(settings: ProviderSettings, client: UpstreamClient): ProviderAdapter {
  const credentials = anthropicCredentials(settings);
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...credentials };
  const apiBase = anthropicApiBase(settings.baseUrl);
  const messagesUrl = new URL(`${apiBase}/messages`);
  const provider = settings.name;

  return {
    name: settings.name,
    type: settings.type,
    baseUrl: apiBase,
    credentialHeaders: () => ({ ...credentials }),
    messagesApi: createMessagesApi(client, { provider, apiBase, credentials }),

    async chatCompletion(request: ChatRequestBody, context: CallContext): Promise<JsonResult | StreamResult> {
      const upstreamRequest = convertChatRequest(request, { provider });
      const response = await client.request({
        provider,
        url: messagesUrl,
        method: 'POST',
        headers,
        body: JSON.stringify(upstreamRequest),
        signal: context.signal,
      });
      if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, provider);
      const created = Math.floor(Date.now() / 1000);
      if (upstreamRequest.stream === true) {
        const streamOptions = request['stream_options'];
        const includeUsage = isRecord(streamOptions) && streamOptions['include_usage'] === true;
        const options = { provider, created, model: request.model, includeUsage };
        return { kind: 'stream', body: await openConvertedStream(response.body, options, context.signal) };
      }
      const message = parseMessagesResponse(await readBody(response, provider, context.signal), provider);
      return { kind: 'json', body: JSON.stringify(convertChatResponse(message, { created, model: request.model })) };
    },

    listModels: (signal: AbortSignal): Promise<UpstreamModel[]> => listModels(client, provider, apiBase, headers, signal),

    async forward(request: ForwardRequest, context: CallContext): Promise<UpstreamResponse> {
      // A client's own anthropic-version (and anthropic-beta) is kept; the key is always ours.
      const versioned = Object.keys(request.headers).some((name) => name.toLowerCase() === 'anthropic-version');
      const { 'anthropic-version': version, ...key } = credentials;
      return client.request({
        provider,
        url: new URL(`${apiBase}/${request.path}`),
        method: request.method,
        headers: { ...request.headers, ...key, ...(versioned ? {} : { 'anthropic-version': version ?? ANTHROPIC_VERSION }) },
        body: request.body ?? null,
        signal: context.signal,
      });
    },
  };
}

/** Anthropic authenticates with `x-api-key` and needs the API version on every request. */
export function anthropicCredentials(settings: ProviderSettings): Record<string, string> {
  const headers: Record<string, string> = {};
  if (settings.apiKey !== null) headers['x-api-key'] = settings.apiKey;
  headers['anthropic-version'] = ANTHROPIC_VERSION;
  return headers;
}

/**
 * The API base the paths hang off: a `base_url` given as a bare origin (the Anthropic SDK's
 * convention, `https://api.anthropic.com`) gets `/v1`; one with a path is taken as it is.
 */
export function anthropicApiBase(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  try {
    return new URL(trimmed).pathname.replace(/\/+$/, '') === '' ? `${trimmed}/v1` : trimmed;
  } catch {
    return trimmed;
  }
}

/** Every page of Anthropic's `GET /models` (1000 models a page, bounded). */
async function listModels(
  client: UpstreamClient,
  provider: string,
  apiBase: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<UpstreamModel[]> {
  const models: UpstreamModel[] = [];
  let after: string | null = null;
  for (let page = 0; page < maximumModelPages; page += 1) {
    const query = new URLSearchParams({ limit: '1000', ...(after === null ? {} : { after_id: after }) });
    const url = new URL(`${apiBase}/models?${query.toString()}`);
    const response = await client.request({ provider, url, method: 'GET', headers, signal });
    if (response.statusCode !== 200) throw await upstreamErrorOf(response, provider);
    const parsed = parseModelPage(await readBody(response, provider, signal));
    if (parsed === null) {
      throw providerError(`upstream ${provider} returned an unreadable model list`, { provider, code: 'invalid_upstream_response' });
    }
    models.push(...parsed.models);
    after = parsed.next;
    if (after === null) break;
  }
  return models;
}
