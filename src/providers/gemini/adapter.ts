import type { ProviderSettings } from '../../config/settings.ts';
import { providerError } from '../../errors/gateway-error.ts';
import { createOpenAICompatibleAdapter } from '../openai-compatible/adapter.ts';
import type { ProviderAdapter, UpstreamModel } from '../provider.ts';
import { readBody, upstreamErrorOf } from '../upstream-body.ts';
import type { UpstreamClient } from '../upstream-client.ts';
import { parseGeminiModelPage } from './parse-model-page.ts';

/** Gemini returns at most 1000 models per page; more pages than this means a looping token. */
const pageSize = 1000;
const maximumPages = 20;

/**
 * Gemini: chat and embeddings go through Google's OpenAI-compatible endpoint (the base URL,
 * `.../v1beta/openai`), but that endpoint's model listing is incomplete, so models come from
 * the native `GET .../v1beta/models` (paginated). A base URL that does not end in `/openai`
 * (a proxy speaking OpenAI's format) keeps the OpenAI listing.
 */
export function createGeminiAdapter(settings: ProviderSettings, client: UpstreamClient): ProviderAdapter {
  const compatible = createOpenAICompatibleAdapter(settings, client);
  const nativeBase = nativeBaseOf(settings.baseUrl);
  if (nativeBase === null) return compatible;
  const provider = settings.name;
  // The native API takes the key in `x-goog-api-key` (never in the URL, where it would be logged).
  const headers: Record<string, string> = { accept: 'application/json' };
  if (settings.apiKey !== null) headers['x-goog-api-key'] = settings.apiKey;

  const listPage = async (pageToken: string | null, signal: AbortSignal): Promise<ReturnType<typeof parseGeminiModelPage>> => {
    const url = new URL(`${nativeBase}/models`);
    url.searchParams.set('pageSize', String(pageSize));
    if (pageToken !== null) url.searchParams.set('pageToken', pageToken);
    const response = await client.request({ provider, url, method: 'GET', headers, signal });
    if (response.statusCode !== 200) throw await upstreamErrorOf(response, provider);
    return parseGeminiModelPage(await readBody(response, provider, signal));
  };

  return {
    ...compatible,
    async listModels(signal: AbortSignal): Promise<UpstreamModel[]> {
      const models: UpstreamModel[] = [];
      let pageToken: string | null = null;
      for (let page = 0; page < maximumPages; page += 1) {
        const listed = await listPage(pageToken, signal);
        if (listed === null)
          throw providerError(`upstream ${provider} returned an unreadable model list`, { provider, code: 'invalid_upstream_response' });
        models.push(...listed.models);
        pageToken = listed.nextPageToken;
        if (pageToken === null) break;
      }
      return models;
    },
  };
}

/** `https://generativelanguage.googleapis.com/v1beta/openai` -> `.../v1beta`; null without `/openai`. */
export function nativeBaseOf(baseUrl: string): string | null {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/openai') ? trimmed.slice(0, -'/openai'.length) : null;
}
