import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openAIClient } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { listModels } from '../support/http.ts';
import { chatHandler, embeddingsHandler, type GeminiModel, geminiModelsHandler } from '../support/mock-openai-extras.ts';
import { MOCK_CONTENT, type MockRouteHandler, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Provider type `gemini` with `api: openai`: chat, embeddings and (translated) responses
// through Google's OpenAI-compatible endpoint `.../v1beta/openai`, models from the native
// paginated `GET .../v1beta/models` listing (bare ids, chat and embedding models only). The
// native API (the default) has its own suite, gemini-native.test.ts.

const geminiKey = 'gemini-upstream-key';
const nativeModels: GeminiModel[] = [
  { name: 'models/gemini-2.0-flash', supportedGenerationMethods: ['generateContent', 'countTokens'] },
  { name: 'models/aqa', supportedGenerationMethods: ['generateAnswer'] },
  { name: 'models/gemini-embedding-001', supportedGenerationMethods: ['embedContent'] },
  { name: 'models/imagen-4.0-generate-001', supportedGenerationMethods: ['predict'] },
  { name: 'models/gemini-2.5-pro', supportedGenerationMethods: ['generateContent'] },
];

describe('gemini provider, api: openai', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let client: OpenAI;
  const listingQueries: URLSearchParams[] = [];

  beforeAll(async () => {
    mock = await startMockUpstream();
    const listing = geminiModelsHandler(nativeModels, 2);
    const recordingListing: MockRouteHandler = (request, response) => {
      listingQueries.push(new URLSearchParams(request.query));
      return listing(request, response);
    };
    mock.route('GET', '/v1beta/models', recordingListing);
    mock.route('POST', '/v1beta/openai/chat/completions', chatHandler());
    mock.route('POST', '/v1beta/openai/embeddings', embeddingsHandler());
    const base = mock.url.replace(/\/v1$/, '/v1beta/openai');
    const configYaml = [
      'providers:',
      '  gemini:',
      '    type: gemini',
      '    api: openai',
      `    api_key: ${geminiKey}`,
      `    base_url: ${base}`,
      '',
    ].join('\n');
    gateway = await startGateway({ env: { MASTER_KEY }, configYaml });
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('lists models from the native listing, every page, without the models/ prefix', async () => {
    const ids = (await listModels(gateway)).map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['gemini/gemini-2.0-flash', 'gemini/gemini-embedding-001', 'gemini/gemini-2.5-pro']));
    expect(ids.filter((id) => id.startsWith('gemini/'))).toHaveLength(3);

    const listings = mock.requests.filter((recorded) => recorded.path === '/v1beta/models');
    expect(listings.length).toBeGreaterThanOrEqual(3);
    for (const recorded of listings) {
      expect(recorded.headers['x-goog-api-key']).toBe(geminiKey);
      expect(recorded.headers.authorization).toBeUndefined();
    }
    expect(listingQueries[0]?.get('pageSize')).toBe('1000');
    expect(listingQueries.slice(0, 3).map((query) => query.get('pageToken'))).toEqual([null, '2', '4']);
  });

  it('serves chat through the OpenAI-compatible endpoint with a bearer key', async () => {
    const completion = await client.chat.completions.create({
      model: 'gemini/gemini-2.0-flash',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(completion.choices[0]?.message.content).toBe(MOCK_CONTENT);
    const chat = mock.requests.filter((recorded) => recorded.path === '/v1beta/openai/chat/completions').at(-1);
    expect(chat?.headers.authorization).toBe(`Bearer ${geminiKey}`);
    expect((chat?.body as { model?: unknown }).model).toBe('gemini-2.0-flash');
  });

  it('serves embeddings and translated responses', async () => {
    const embedded = await client.embeddings.create({ model: 'gemini-embedding-001', input: 'hi' });
    expect((embedded as unknown as { provider?: unknown }).provider).toBe('gemini');
    const response = await client.responses.create({ model: 'gemini/gemini-2.5-pro', input: 'hi' });
    expect(response.output_text).toBe(MOCK_CONTENT);
    expect(mock.requests.some((recorded) => recorded.path.endsWith('/responses'))).toBe(false);
  });
});
