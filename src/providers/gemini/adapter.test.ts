import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ProviderSettings } from '../provider-settings.ts';
import { providerTypes } from '../provider-types.ts';
import type { UpstreamClient, UpstreamRequest, UpstreamResponse } from '../upstream-client.ts';
import { GEMINI_API_BASE, createGeminiAdapter, isNativePath } from './adapter.ts';

const answer = JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] });

/** An upstream client that records each request and answers a Gemini or OpenAI body. */
function recordingClient(): { client: UpstreamClient; sent: UpstreamRequest[] } {
  const sent: UpstreamRequest[] = [];
  const request = (upstream: UpstreamRequest): Promise<UpstreamResponse> => {
    sent.push(upstream);
    const body = upstream.url.pathname.endsWith('/models') ? '{"models":[]}' : answer;
    return Promise.resolve({ statusCode: 200, headers: {}, body: Readable.from([Buffer.from(body)]) } as unknown as UpstreamResponse);
  };
  return { client: { request } as unknown as UpstreamClient, sent };
}

const settings = (baseUrl: string, api?: 'native' | 'openai'): ProviderSettings => ({
  name: 'gemini',
  type: 'gemini',
  apiKey: 'k',
  baseUrl,
  models: null,
  options: api === undefined ? {} : { api },
});

const call = { signal: new AbortController().signal, requestId: 'r' };

describe('createGeminiAdapter endpoints', () => {
  it('defaults to the native API at generativelanguage v1beta, with the key in x-goog-api-key', async () => {
    expect(providerTypes.gemini.defaultBaseUrl).toBe(GEMINI_API_BASE);
    const { client, sent } = recordingClient();
    const adapter = createGeminiAdapter(settings(GEMINI_API_BASE), client);
    await adapter.chatCompletion({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] }, call);
    expect(sent[0]?.url.href).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent[0]?.headers['x-goog-api-key']).toBe('k');
    expect(sent[0]?.headers['authorization']).toBeUndefined();
    expect(adapter.embeddingsApi).toBeDefined();
    // OpenAI-format relays (images, audio, passthrough) use Google's OpenAI-compatible route.
    await adapter.forward({ method: 'POST', path: 'images/generations', headers: {} }, call);
    expect(sent[1]?.url.href).toBe('https://generativelanguage.googleapis.com/v1beta/openai/images/generations');
    expect(sent[1]?.headers['authorization']).toBe('Bearer k');
  });

  it('forwards native API paths (passthrough) to the native base with x-goog-api-key', async () => {
    const { client, sent } = recordingClient();
    const adapter = createGeminiAdapter(settings(GEMINI_API_BASE), client);
    const headers = { authorization: 'Bearer client', 'content-type': 'application/json' };
    await adapter.forward({ method: 'POST', path: 'models/gemini-2.5-flash:countTokens', headers, body: '{}' }, call);
    expect(sent[0]?.url.href).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:countTokens');
    expect(sent[0]?.headers).toEqual({ 'content-type': 'application/json', 'x-goog-api-key': 'k' });
    expect(isNativePath('cachedContents?pageSize=5')).toBe(true);
    expect(isNativePath('models')).toBe(false);
    expect(isNativePath('chat/completions')).toBe(false);
  });

  it('sends a `native` surface to the native base and an `upload` one to the upload base', async () => {
    const { client, sent } = recordingClient();
    const adapter = createGeminiAdapter(settings(GEMINI_API_BASE), client);
    await adapter.forward({ method: 'GET', path: 'files/abc', headers: {}, surface: 'native' }, call);
    await adapter.forward({ method: 'POST', path: 'files?upload_id=u', headers: {}, surface: 'upload' }, call);
    await adapter.forward({ method: 'GET', path: 'files/abc', headers: {} }, call);
    expect(sent.map((request) => request.url.href)).toEqual([
      'https://generativelanguage.googleapis.com/v1beta/files/abc',
      'https://generativelanguage.googleapis.com/upload/v1beta/files?upload_id=u',
      'https://generativelanguage.googleapis.com/v1beta/openai/files/abc',
    ]);
    expect(sent[1]?.headers['x-goog-api-key']).toBe('k');
  });

  it('takes a legacy base URL ending in /openai as the native base', async () => {
    const { client, sent } = recordingClient();
    const adapter = createGeminiAdapter(settings('http://proxy.test/v1beta/openai'), client);
    await adapter.chatCompletion({ model: 'models/gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }], stream: false }, call);
    expect(sent[0]?.url.href).toBe('http://proxy.test/v1beta/models/gemini-2.5-pro:generateContent');
  });

  it('api: openai keeps the OpenAI-compatible route, its old default URL, and the native model listing', async () => {
    const { client, sent } = recordingClient();
    const adapter = createGeminiAdapter(settings(GEMINI_API_BASE, 'openai'), client);
    expect(adapter.baseUrl).toBe('https://generativelanguage.googleapis.com/v1beta/openai');
    expect(adapter.embeddingsApi).toBeUndefined();
    await adapter.listModels(call.signal);
    expect(sent[0]?.url.href).toBe('https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000');
    expect(sent[0]?.headers['x-goog-api-key']).toBe('k');
  });
});
