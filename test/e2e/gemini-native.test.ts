import type OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { anthropicClient, expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, chatBody, listModels, parseJson, rawRequest } from '../support/http.ts';
import {
  type GeminiRecordedRequest,
  MOCK_GEMINI_SIGNATURE,
  MOCK_GEMINI_TEXT,
  MOCK_GEMINI_THOUGHT,
  MOCK_GEMINI_USAGE,
  type MockGemini,
  startMockGemini,
} from '../support/mock-gemini.ts';
import { MOCK_CONTENT, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { collect } from '../support/streams.ts';

// The native Gemini adapter (type `gemini`, default `api: native`) end to end: the official
// openai client drives the gateway in front of a mock speaking Google's generativelanguage
// API byte for byte (generateContent, streamGenerateContent?alt=sse, batchEmbedContents,
// Google's error envelope), which checks the key in `x-goog-api-key`.

const GEMINI_KEY = 'gemini-native-key';

const configYaml = (gemini: MockGemini, openai: MockUpstream): string => `
providers:
  gemini:
    type: gemini
    api_key: ${GEMINI_KEY}
    base_url: ${gemini.url}
  gemini-badkey:
    type: gemini
    api_key: wrong-key
    base_url: ${gemini.url}
    models: [gemini-2.5-flash]
  openai:
    type: openai
    api_key: ${UPSTREAM_KEY}
    base_url: ${openai.url}
virtual_models:
  - name: gemini-then-openai
    strategy: failover
    targets:
      - { provider: gemini, model: gemini-429 }
      - { provider: openai, model: mock-model }
  - name: gemini-500-then-openai
    strategy: failover
    targets:
      - { provider: gemini, model: gemini-500 }
      - { provider: openai, model: mock-model }
`;

const weatherTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
};

type Extra<T> = T & Record<string, unknown>;

describe('native Gemini adapter', () => {
  let gemini: MockGemini;
  let openai: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: OpenAI;

  const lastCall = (suffix: string): GeminiRecordedRequest => {
    const found = gemini.requests.filter((request) => request.path.endsWith(suffix)).at(-1);
    expect(found, `the mock received no ${suffix} request`).toBeDefined();
    return found as GeminiRecordedRequest;
  };

  beforeAll(async () => {
    gemini = await startMockGemini(GEMINI_KEY);
    openai = await startMockUpstream();
    database = await createGatewayDatabase('sqlite');
    gateway = await startGateway({
      env: { MASTER_KEY, ...database.env, CIRCUIT_BREAKER_FAILURES: '1000' },
      configYaml: configYaml(gemini, openai),
    });
    storage = await database.open(gateway);
    client = openAIClient(gateway);
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await gemini?.close();
    await openai?.close();
  });

  it('lists models from the native GET /v1beta/models', async () => {
    const ids = (await listModels(gateway)).map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['gemini/gemini-2.5-pro', 'gemini/gemini-embedding-001', 'gemini/gemini-tool']));
    expect(ids).not.toContain('gemini/aqa');
    expect(lastCall('/v1beta/models').headers['x-goog-api-key']).toBe(GEMINI_KEY);
  });

  it('answers chat JSON from generateContent, with the key in x-goog-api-key, and records usage with cached and thinking tokens', async () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello' },
    ];
    const { data, response } = await client.chat.completions
      .create({ model: 'gemini/gemini-2.5-flash', messages, temperature: 0.3, max_tokens: 50 })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(MOCK_GEMINI_TEXT);
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect((data.choices[0] as unknown as Record<string, unknown>)['safety_ratings']).toEqual([
      { category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' },
    ]);
    const { promptTokenCount, candidatesTokenCount, cachedContentTokenCount, thoughtsTokenCount } = MOCK_GEMINI_USAGE;
    expect(data.usage).toMatchObject({
      prompt_tokens: promptTokenCount,
      completion_tokens: candidatesTokenCount + thoughtsTokenCount,
      prompt_tokens_details: { cached_tokens: cachedContentTokenCount },
      completion_tokens_details: { reasoning_tokens: thoughtsTokenCount },
    });

    const call = lastCall('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(call.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(call.headers.authorization).toBeUndefined();
    expect(call.query.has('key')).toBe(false);
    expect(call.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { temperature: 0.3, maxOutputTokens: 50 },
    });

    const record = await usageRecordOf(storage, response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ provider: 'gemini', model: 'gemini-2.5-flash', promptTokens: 12, completionTokens: 12 });
    // gemini-2.5-flash: $0.30 input, $0.03 cached input, $2.50 output per million tokens.
    expect(record.costUsd).toBeCloseTo((8 * 0.3 + 4 * 0.03 + 12 * 2.5) / 1e6, 12);
  });

  it('streams chat from streamGenerateContent?alt=sse as OpenAI chunks with a final usage chunk', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({
        model: 'gemini/gemini-2.5-flash',
        messages: [{ role: 'user', content: 'Say hello' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    const chunks = await collect(stream);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(MOCK_GEMINI_TEXT);
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(['stop']);
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 12, total_tokens: 24 });
    const call = lastCall('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(call.query.get('alt')).toBe('sse');
    expect(call.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    const record = await usageRecordOf(storage, response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ provider: 'gemini', model: 'gemini-2.5-flash', promptTokens: 12, completionTokens: 12 });
  });

  it('returns thought summaries as reasoning_content when reasoning_effort is set', async () => {
    const completion = await client.chat.completions.create({
      model: 'gemini/gemini-2.5-pro',
      messages: [{ role: 'user', content: 'Say hello' }],
      reasoning_effort: 'medium',
    });
    const message = completion.choices[0]?.message as unknown as Record<string, unknown>;
    expect(message['reasoning_content']).toBe(MOCK_GEMINI_THOUGHT);
    expect(message['content']).toBe(MOCK_GEMINI_TEXT);
    const config = lastCall(':generateContent').body?.['generationConfig'];
    expect(config).toEqual({ thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } });

    const stream = await client.chat.completions.create({
      model: 'gemini/gemini-2.5-pro',
      messages: [{ role: 'user', content: 'Say hello' }],
      reasoning_effort: 'high',
      stream: true,
    });
    const chunks = await collect(stream);
    const reasoning = chunks
      .map((chunk) => (chunk.choices[0]?.delta as Record<string, unknown> | undefined)?.['reasoning_content'] ?? '')
      .join('');
    expect(reasoning).toBe(MOCK_GEMINI_THOUGHT);
  });

  it('round-trips a tool call: functionCall -> tool_calls, tool result -> functionResponse matched by name, signature kept', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.chat.completions.create({
      model: 'gemini/gemini-tool',
      messages,
      tools: [weatherTool],
      tool_choice: 'auto',
    });
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') throw new Error('expected a function tool call');
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(call.id).toMatch(/^call_/);
    const sent = lastCall('/v1beta/models/gemini-tool:generateContent').body ?? {};
    expect(sent['tools']).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Current weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        ],
      },
    ]);
    expect(sent['toolConfig']).toEqual({ functionCallingConfig: { mode: 'AUTO' } });

    const assistant = choice?.message as ChatCompletionMessageParam;
    const second = await client.chat.completions.create({
      model: 'gemini/gemini-tool',
      messages: [...messages, assistant, { role: 'tool', tool_call_id: call.id, content: '{"temperature":21}' }],
      tools: [weatherTool],
    });
    expect(second.choices[0]?.message.content).toBe('Weather: {"temperature":21}');
    const contents = lastCall('/v1beta/models/gemini-tool:generateContent').body?.['contents'];
    expect(contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
      {
        role: 'model',
        parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: MOCK_GEMINI_SIGNATURE }],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 21 } } }] },
    ]);
  });

  it('streams a tool call', async () => {
    const stream = await client.chat.completions.create({
      model: 'gemini/gemini-tool',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
      stream: true,
    });
    const chunks = await collect(stream);
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(['tool_calls']);
  });

  it('serves /v1/responses translated through the native chat', async () => {
    const response = await client.responses.create({ model: 'gemini/gemini-2.5-flash', input: 'Say hello', instructions: 'Be brief.' });
    expect(response.output_text).toBe(MOCK_GEMINI_TEXT);
    expect(lastCall('/v1beta/models/gemini-2.5-flash:generateContent').body?.['systemInstruction']).toEqual({
      parts: [{ text: 'Be brief.' }],
    });
  });

  it("serves Anthropic's /v1/messages dialect through the native chat", async () => {
    const message = await anthropicClient(gateway).messages.create({
      model: 'gemini/gemini-2.5-flash',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(message.content.find((block) => block.type === 'text')).toMatchObject({ text: MOCK_GEMINI_TEXT });
    const sent = lastCall('/v1beta/models/gemini-2.5-flash:generateContent').body ?? {};
    expect(sent['systemInstruction']).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(sent['generationConfig']).toMatchObject({ maxOutputTokens: 100 });
  });

  it('passes native API calls through /p/gemini/ with the instance key', async () => {
    const body = { contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }] };
    const reply = await rawRequest(`${gateway.url}/p/gemini/models/gemini-2.5-flash:generateContent`, { headers: bearer(), body });
    expect(reply.status).toBe(200);
    expect(parseJson(reply.text)['responseId']).toBe('mockResponseId');
    const call = lastCall('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(call.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(call.body).toEqual(body);
  });

  it('serves embeddings through batchEmbedContents', async () => {
    const embedded = await client.embeddings.create({
      model: 'gemini/gemini-embedding-001',
      input: ['one', 'two'],
      dimensions: 4,
      encoding_format: 'float',
    });
    expect(embedded.data.map((item) => item.embedding)).toEqual([
      [0, 0.1, 0.2, 0.3],
      [1, 1.1, 1.2, 1.3],
    ]);
    expect((embedded as unknown as Record<string, unknown>)['provider']).toBe('gemini');
    const call = lastCall('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(call.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(call.body).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'one' }] }, outputDimensionality: 4 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'two' }] }, outputDimensionality: 4 },
      ],
    });
    // The official client asks for base64 by default: the floats come back encoded.
    const encoded = await client.embeddings.create({ model: 'gemini/gemini-embedding-001', input: 'one', dimensions: 2 });
    expect(encoded.data[0]?.embedding).toEqual([0, expect.closeTo(0.1, 6)]);
  });

  it("maps Google's error envelope: 429 RESOURCE_EXHAUSTED keeps its message, a bad key is an authentication_error", async () => {
    const limited = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('gemini/gemini-429') });
    const error = expectEnvelope(limited, { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited', provider: 'gemini' });
    expect(error.message).toMatch(/^You exceeded your current quota/);

    const thrown = await rejectionOf(
      client.chat.completions.create({ model: 'gemini-badkey/gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] }),
    );
    const auth = expectClientError(thrown, { status: 401, type: 'authentication_error', provider: 'gemini-badkey' });
    expect(auth.message).toBe('API key not valid. Please pass a valid API key.');
  });

  it('fails over from Gemini to OpenAI on 429 RESOURCE_EXHAUSTED and on 500, JSON and stream', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'gemini-then-openai', messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(MOCK_CONTENT);
    expect((data as unknown as Record<string, unknown>)['provider']).toBe('openai');
    expect(gemini.requests.some((request) => request.path.endsWith('/gemini-429:generateContent'))).toBe(true);
    expect(response.headers.get('x-request-id')).toBeTruthy();

    const stream = await client.chat.completions.create({
      model: 'gemini-500-then-openai',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const chunks: Extra<ChatCompletionChunk>[] = await collect(stream);
    // The OpenAI mock streams tok0 ... tok4.
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toMatch(/^tok0 tok1/);
    expect(chunks[0]?.['provider']).toBe('openai');
    expect(gemini.requests.some((request) => request.path.endsWith('/gemini-500:streamGenerateContent'))).toBe(true);
  });

  it('ends a stream whose upstream breaks mid-way with an error event, never a silent [DONE]', async () => {
    for (const model of ['gemini/gemini-cut', 'gemini/gemini-stream-error']) {
      const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody(model, { stream: true }) });
      expect(reply.status).toBe(200);
      const frames = reply.text.split('\n\n').filter((frame) => frame !== '');
      // The first half of the answer's text arrived before the break.
      expect(reply.text).toContain(`"content":"${MOCK_GEMINI_TEXT.slice(0, 9)}"`);
      expect(frames.at(-1)).not.toBe('data: [DONE]');
      const last = parseJson(frames.at(-1)?.slice('data: '.length) ?? '');
      expect(last['error']).toMatchObject({ provider: 'gemini' });
    }
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('gemini/gemini-stream-error', { stream: true }),
    });
    const last = parseJson(
      reply.text
        .split('\n\n')
        .filter((frame) => frame !== '')
        .at(-1)
        ?.slice('data: '.length) ?? '',
    );
    expect(last['error']).toMatchObject({ type: 'provider_error', message: 'The model is overloaded. Please try again later.' });
  });
});
