import { abortSourceOf } from '../../core/abort-source.ts';
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
import { providerTypes } from '../provider-types.ts';
import { bufferedUpstreamErrorOf, readBody, textOf, upstreamErrorOf } from '../upstream-body.ts';
import type { UpstreamClient, UpstreamResponse } from '../upstream-client.ts';
import { parseModelList } from './parse-model-list.ts';

/**
 * The adapter for every provider that speaks OpenAI's wire format. Types differ only by
 * configuration (base URL, auth header), never by code.
 */
export function createOpenAICompatibleAdapter(settings: ProviderSettings, client: UpstreamClient): ProviderAdapter {
  const credentials = credentialHeaders(settings);
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...credentials };
  const chatUrl = new URL(`${settings.baseUrl}/chat/completions`);
  const modelsUrl = new URL(`${settings.baseUrl}/models`);
  const provider = settings.name;

  return {
    name: settings.name,
    type: settings.type,
    baseUrl: settings.baseUrl,
    credentialHeaders: () => ({ ...credentials }),

    async chatCompletion(request: ChatRequestBody, context: CallContext): Promise<JsonResult | StreamResult> {
      const body = JSON.stringify(request);
      const abort = context.abort ?? abortSourceOf(context.signal);
      if (request['stream'] !== true) {
        const answer = await client.requestBuffered({ provider, url: chatUrl, method: 'POST', headers, body, abort });
        if (answer.statusCode < 200 || answer.statusCode > 299) throw bufferedUpstreamErrorOf(answer, provider);
        return { kind: 'json', body: textOf(answer.body) };
      }
      const response = await client.requestStream({ provider, url: chatUrl, method: 'POST', headers, body, abort });
      if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, provider);
      return { kind: 'stream', body: response.body };
    },

    async listModels(signal: AbortSignal): Promise<UpstreamModel[]> {
      const response = await client.request({ provider, url: modelsUrl, method: 'GET', headers, signal });
      if (response.statusCode !== 200) throw await upstreamErrorOf(response, provider);
      const models = parseModelList(await readBody(response, provider, signal));
      if (models === null)
        throw providerError(`upstream ${provider} returned an unreadable model list`, { provider, code: 'invalid_upstream_response' });
      return models;
    },

    async forward(request: ForwardRequest, context: CallContext): Promise<UpstreamResponse> {
      return client.request({
        provider,
        url: new URL(`${settings.baseUrl}/${request.path}`),
        method: request.method,
        headers: { ...request.headers, ...credentials },
        body: request.body ?? null,
        signal: context.signal,
      });
    },
  };
}

/** How the instance's key is sent: `Authorization: Bearer`, Azure's `api-key` or `x-api-key`. */
export function credentialHeaders(settings: ProviderSettings): Record<string, string> {
  const headers: Record<string, string> = {};
  if (settings.apiKey !== null) {
    const kind = providerTypes[settings.type].authHeader;
    if (kind === 'bearer') headers['authorization'] = `Bearer ${settings.apiKey}`;
    else headers[kind] = settings.apiKey;
  }
  return headers;
}
