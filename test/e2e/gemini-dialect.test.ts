import { randomUUID } from 'node:crypto';

import { FunctionCallingConfigMode, type GenerateContentResponse, type GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { geminiClient, requestIdOf } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { parseJson, rawRequest } from '../support/http.ts';
import { MOCK_ANTHROPIC_CONTENT, type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { embeddingsHandler, mockEmbedding } from '../support/mock-openai-extras.ts';
import {
  MOCK_COMPLETION_TOKENS,
  MOCK_CONTENT,
  MOCK_PROMPT_TOKENS,
  type MockUpstream,
  startMockUpstream,
} from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { chatRequests, lastChatBody } from '../support/upstream.ts';
import { eventually } from '../support/wait.ts';

// Issue 17: Google's Gemini API dialect (POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent) in front of any provider, driven by the official @google/genai SDK
// with its base URL set to the gateway: an OpenAI-compatible mock and a native Anthropic mock
// behind it, through the chat pipeline (usage, failover, virtual models).

const configYaml = (openai: MockUpstream, anthropic: MockAnthropic): string => `
providers:
  openai:
    type: openai
    api_key: ${UPSTREAM_KEY}
    base_url: ${openai.url}
    models: [mock-model, tool-model, error-429, slow-stream, text-embedding-3-small]
  claude:
    type: anthropic
    api_key: sk-ant-upstream
    base_url: ${anthropic.url}
    models: [claude-sonnet-4-5]
virtual_models:
  - name: resilient
    strategy: failover
    targets:
      - { provider: openai, model: error-429 }
      - { provider: claude, model: claude-sonnet-4-5 }
`;

/** A prompt of its own, so that no two requests look alike upstream. */
const prompt = (text = 'Say hello'): string => `${text} (${randomUUID()})`;

const weatherTool = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
    },
  ],
};

describe('the Gemini dialect with the @google/genai SDK', () => {
  let openai: MockUpstream;
  let anthropic: MockAnthropic;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let ai: GoogleGenAI;

  beforeAll(async () => {
    openai = await startMockUpstream();
    openai.route('POST', '/embeddings', embeddingsHandler());
    anthropic = await startMockAnthropic();
    database = await createGatewayDatabase('sqlite');
    const env = { MASTER_KEY, UPSTREAM_RETRIES: '0', RESPONSE_CACHE_ENABLED: 'true', ...database.env };
    gateway = await startGateway({ env, configYaml: configYaml(openai, anthropic) });
    storage = await database.open(gateway);
    ai = geminiClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await anthropic?.close();
    await openai?.close();
  });

  beforeEach(() => {
    openai.reset();
    anthropic.reset();
  });

  it('answers generateContent in Gemini shape, translating the request, and records usage', async () => {
    const response = await ai.models.generateContent({
      model: 'openai/mock-model',
      contents: prompt(),
      config: { systemInstruction: 'Be brief.', temperature: 0.2, maxOutputTokens: 64, stopSequences: ['END'] },
    });
    expect(response.text).toBe(MOCK_CONTENT);
    expect(response.candidates?.[0]).toMatchObject({ content: { role: 'model', parts: [{ text: MOCK_CONTENT }] }, finishReason: 'STOP' });
    expect(response.usageMetadata).toEqual({
      promptTokenCount: MOCK_PROMPT_TOKENS,
      candidatesTokenCount: MOCK_COMPLETION_TOKENS,
      totalTokenCount: MOCK_PROMPT_TOKENS + MOCK_COMPLETION_TOKENS,
    });
    expect(response.modelVersion).toBe('mock-model');
    expect(response.responseId).toMatch(/^chatcmpl-mock-/);
    const upstream = lastChatBody(openai);
    expect(upstream).toMatchObject({ model: 'mock-model', temperature: 0.2, max_tokens: 64, stop: ['END'] });
    expect(upstream['messages']).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: expect.stringMatching(/^Say hello/) },
    ]);
    const record = await usageRecordOf(storage, requestIdOf(response));
    expect(record).toMatchObject({ endpoint: '/v1beta/models:generateContent', provider: 'openai', model: 'mock-model', status: 200 });
    expect(record).toMatchObject({ promptTokens: MOCK_PROMPT_TOKENS, completionTokens: MOCK_COMPLETION_TOKENS, stream: false });
  });

  it('streams with generateContentStream (SSE): text chunks, then the finish reason and usage', async () => {
    const stream = await ai.models.generateContentStream({ model: 'openai/mock-model', contents: prompt() });
    const chunks: GenerateContentResponse[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.text ?? '').join('')).toBe('tok0 tok1 tok2 tok3 tok4 ');
    const last = chunks.at(-1);
    expect(last?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last?.usageMetadata).toMatchObject({ promptTokenCount: MOCK_PROMPT_TOKENS, candidatesTokenCount: 5 });
    expect(lastChatBody(openai)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const record = await usageRecordOf(storage, requestIdOf(chunks[0] ?? {}));
    expect(record).toMatchObject({ endpoint: '/v1beta/models:streamGenerateContent', status: 200, stream: true, completionTokens: 5 });
  });

  it('runs a function calling round trip: functionCall out, functionResponse back as a tool message', async () => {
    const contents = [{ role: 'user', parts: [{ text: prompt('Weather in Paris?') }] }];
    const config = { tools: [weatherTool], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } } };
    const first = await ai.models.generateContent({ model: 'openai/mock-model', contents, config } as never);
    const call = first.functionCalls?.[0];
    expect(call).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
    expect(lastChatBody(openai)['tools']).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ]);
    expect(lastChatBody(openai)['tool_choice']).toBe('auto');
    const history = [
      ...contents,
      first.candidates?.[0]?.content ?? {},
      { role: 'user', parts: [{ functionResponse: { id: call?.id, name: 'get_weather', response: { output: 'sunny, 21 C' } } }] },
    ];
    await ai.models.generateContent({ model: 'openai/mock-model', contents: history, config } as never);
    const messages = lastChatBody(openai)['messages'] as Array<Record<string, unknown>>;
    const toolCalls = messages[1]?.['tool_calls'] as Array<{ id: string; function: { name: string; arguments: string } }>;
    expect(toolCalls[0]?.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(messages[2]).toEqual({ role: 'tool', tool_call_id: toolCalls[0]?.id, content: '{"output":"sunny, 21 C"}' });
  });

  it('streams a function call whole, in the last chunk', async () => {
    const stream = await ai.models.generateContentStream({
      model: 'openai/tool-model',
      contents: prompt(),
      config: { tools: [weatherTool] },
    } as never);
    const calls = [];
    for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []));
    expect(calls).toEqual([{ id: expect.any(String), name: 'get_weather', args: { city: 'Paris' } }]);
  });

  it('serves a native Anthropic instance behind the dialect, JSON and stream', async () => {
    const response = await ai.models.generateContent({ model: 'claude/claude-sonnet-4-5', contents: prompt() });
    expect(response.text).toBe(MOCK_ANTHROPIC_CONTENT);
    expect(response.candidates?.[0]?.finishReason).toBe('STOP');
    expect(response.usageMetadata?.promptTokenCount).toBeGreaterThan(0);
    expect(anthropic.requests.filter((request) => request.path === '/v1/messages')).toHaveLength(1);
    const stream = await ai.models.generateContentStream({ model: 'claude/claude-sonnet-4-5', contents: prompt() });
    let text = '';
    let finish: string | undefined;
    for await (const chunk of stream) {
      text += chunk.text ?? '';
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe('STOP');
  });

  it('fails a virtual model over from a 429 upstream to Anthropic, charging the executed one', async () => {
    const response = await ai.models.generateContent({ model: 'resilient', contents: prompt() });
    expect(response.text).toBe(MOCK_ANTHROPIC_CONTENT);
    const records = await eventually(async () => {
      const found = await storage.usage.findByRequestId(requestIdOf(response));
      return found.length === 2 ? found : undefined;
    }, 'both attempts recorded');
    expect(records.map((record) => [record.provider, record.model, record.status])).toEqual(
      expect.arrayContaining([
        ['openai', 'error-429', 429],
        ['claude', 'claude-sonnet-4-5', 200],
      ]),
    );
  });

  it('takes the model raw or percent-encoded in the path, the key as ?key=, and streams a JSON array without alt=sse', async () => {
    const body = { contents: [{ role: 'user', parts: [{ text: prompt() }] }] };
    const encoded = await rawRequest(`${gateway.url}/v1beta/models/openai%2Fmock-model:generateContent?key=${MASTER_KEY}`, { body });
    expect(encoded.status, encoded.text).toBe(200);
    expect(parseJson(encoded.text)['candidates']).toMatchObject([{ content: { parts: [{ text: MOCK_CONTENT }] } }]);
    const v1 = await rawRequest(`${gateway.url}/v1/models/openai/mock-model:generateContent`, {
      headers: { 'x-goog-api-key': MASTER_KEY },
      body,
    });
    expect(v1.status, v1.text).toBe(200);
    const array = await rawRequest(`${gateway.url}/v1beta/models/openai/mock-model:streamGenerateContent`, {
      headers: { 'x-goog-api-key': MASTER_KEY },
      body,
    });
    expect(array.status, array.text).toBe(200);
    const chunks = JSON.parse(array.text) as Array<{ candidates: Array<{ content: { parts: Array<{ text?: string }> } }> }>;
    expect(chunks.length).toBe(6);
    expect(chunks.flatMap((chunk) => chunk.candidates[0]?.content.parts.map((part) => part.text ?? '')).join('')).toBe(
      'tok0 tok1 tok2 tok3 tok4 ',
    );
  });

  it('embeds through embedContent (batchEmbedContents on the wire)', async () => {
    const response = await ai.models.embedContent({ model: 'openai/text-embedding-3-small', contents: ['first', 'second'] });
    expect(response.embeddings?.map((embedding) => embedding.values)).toEqual([mockEmbedding(0), mockEmbedding(1)]);
    const request = openai.requests.find((recorded) => recorded.path === '/v1/embeddings');
    expect(request?.body).toMatchObject({ model: 'text-embedding-3-small', input: ['first', 'second'] });
  });

  it('counts tokens (the gateway estimate) under the pipeline', async () => {
    const response = await ai.models.countTokens({ model: 'openai/mock-model', contents: 'hello world' });
    expect(response.totalTokens).toBe(2);
    expect(response.sdkHttpResponse?.headers?.['x-gateway-token-count']).toBe('estimate');
    const record = await usageRecordOf(storage, requestIdOf(response));
    expect(record).toMatchObject({ endpoint: '/v1beta/models:countTokens', provider: 'openai', status: 200 });
  });

  it('answers repeated requests from the response cache, JSON and stream (SSE or JSON array)', async () => {
    const contents = prompt('Cache me');
    const first = await ai.models.generateContent({ model: 'openai/mock-model', contents });
    const second = await ai.models.generateContent({ model: 'openai/mock-model', contents });
    expect(second.sdkHttpResponse?.headers?.['x-cache']).toBe('HIT');
    expect(second.text).toBe(first.text);
    expect(second.usageMetadata).toEqual(first.usageMetadata);
    const read = async (): Promise<GenerateContentResponse[]> => {
      const chunks: GenerateContentResponse[] = [];
      for await (const chunk of await ai.models.generateContentStream({ model: 'openai/mock-model', contents })) chunks.push(chunk);
      return chunks;
    };
    const streamed = await read();
    const replayed = await read();
    expect(replayed[0]?.sdkHttpResponse?.headers?.['x-cache']).toBe('HIT');
    const strip = (chunks: GenerateContentResponse[]): unknown[] =>
      chunks.map(({ candidates, usageMetadata }) => ({ candidates, usageMetadata }));
    expect(strip(replayed)).toEqual(strip(streamed));
    expect(chatRequests(openai)).toHaveLength(2);
    const array = await rawRequest(`${gateway.url}/v1beta/models/openai/mock-model:streamGenerateContent`, {
      headers: { 'x-goog-api-key': MASTER_KEY },
      body: { contents: [{ role: 'user', parts: [{ text: contents }] }] },
    });
    expect(array.headers['x-cache']).toBe('HIT');
    expect((JSON.parse(array.text) as unknown[]).length).toBe(streamed.length);
  });

  it('aborts the upstream when the client leaves a stream, and records 499', async () => {
    const controller = new AbortController();
    const stream = await ai.models.generateContentStream({
      model: 'openai/slow-stream',
      contents: prompt('count slowly'),
      config: { abortSignal: controller.signal },
    });
    let requestId = '';
    const reading = (async () => {
      for await (const chunk of stream) {
        requestId = requestIdOf(chunk);
        controller.abort();
      }
    })().catch(() => undefined);
    await reading;
    await openai.waitFor((requests) => requests.some((recorded) => recorded.path === '/v1/chat/completions' && recorded.aborted), 5000);
    const record = await usageRecordOf(storage, requestId);
    expect(record).toMatchObject({ endpoint: '/v1beta/models:streamGenerateContent', status: 499, stream: true });
  });

  it('lists and gets the gateway models as Gemini Model resources (models.list, models.get)', async () => {
    const names: string[] = [];
    for await (const model of await ai.models.list()) names.push(model.name ?? '');
    expect(names).toEqual(expect.arrayContaining(['models/openai/mock-model', 'models/claude/claude-sonnet-4-5', 'models/resilient']));
    const model = await ai.models.get({ model: 'openai/mock-model' });
    expect(model).toMatchObject({ name: 'models/openai/mock-model', supportedActions: expect.arrayContaining(['generateContent']) });
    const missing = await rawRequest(`${gateway.url}/v1beta/models/no-such-model`, { headers: { 'x-goog-api-key': MASTER_KEY } });
    expect(missing.status).toBe(404);
    expect(parseJson(missing.text)['error']).toMatchObject({ code: 404, status: 'NOT_FOUND' });
  });
});
