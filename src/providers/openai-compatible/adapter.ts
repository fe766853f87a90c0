import type { ProviderSettings } from '../../config/settings.ts';
import { providerError } from '../../errors/gateway-error.ts';
import type { CallContext, ChatRequestBody, JsonResult, ProviderAdapter, StreamResult, UpstreamModel } from '../provider.ts';
import { providerTypes } from '../provider-types.ts';
import { mapNetworkError, type UpstreamClient, type UpstreamResponse } from '../upstream-client.ts';
import { mapUpstreamError } from '../upstream-errors.ts';
import { parseModelList } from './parse-model-list.ts';

const maximumErrorBody = 64 * 1024;

/**
 * The adapter for every provider that speaks OpenAI's wire format. Types differ only by
 * configuration (base URL, auth header), never by code.
 */
export function createOpenAICompatibleAdapter(settings: ProviderSettings, client: UpstreamClient): ProviderAdapter {
  const headers = buildHeaders(settings);
  const chatUrl = new URL(`${settings.baseUrl}/chat/completions`);
  const modelsUrl = new URL(`${settings.baseUrl}/models`);
  const provider = settings.name;

  return {
    name: settings.name,
    type: settings.type,

    async chatCompletion(request: ChatRequestBody, context: CallContext): Promise<JsonResult | StreamResult> {
      const response = await client.request({
        provider,
        url: chatUrl,
        method: 'POST',
        headers,
        body: JSON.stringify(request),
        signal: context.signal,
      });
      if (response.statusCode < 200 || response.statusCode > 299) throw await readError(response, provider);
      if (request['stream'] === true) return { kind: 'stream', body: response.body };
      return { kind: 'json', body: await readBody(response, provider, context.signal) };
    },

    async listModels(signal: AbortSignal): Promise<UpstreamModel[]> {
      const response = await client.request({ provider, url: modelsUrl, method: 'GET', headers, signal });
      if (response.statusCode !== 200) throw await readError(response, provider);
      const models = parseModelList(await readBody(response, provider, signal));
      if (models === null)
        throw providerError(`upstream ${provider} returned an unreadable model list`, { provider, code: 'invalid_upstream_response' });
      return models;
    },
  };
}

function buildHeaders(settings: ProviderSettings): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (settings.apiKey !== null) {
    if (providerTypes[settings.type].authHeader === 'api-key') headers['api-key'] = settings.apiKey;
    else headers['authorization'] = `Bearer ${settings.apiKey}`;
  }
  return headers;
}

/** The whole body as text; a failure while reading it is the upstream's (502/504), not ours. */
async function readBody(response: UpstreamResponse, provider: string, signal: AbortSignal): Promise<string> {
  try {
    return await response.body.text();
  } catch (error) {
    throw mapNetworkError(error, provider, signal);
  }
}

async function readError(response: UpstreamResponse, provider: string): Promise<Error> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size > maximumErrorBody) {
        response.body.destroy();
        break;
      }
    }
  } catch {
    // A broken error body still leaves the status to report.
  }
  return mapUpstreamError(response.statusCode, Buffer.concat(chunks).toString('utf8'), provider, response.headers['retry-after']);
}
