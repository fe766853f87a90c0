import type OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { adminUsage } from '../support/admin.ts';
import { openAIClient } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { bearer, callJson, chatBody, listModels, parseJson, rawRequest } from '../support/http.ts';
import {
  MOCK_ANTHROPIC_CONTENT,
  MOCK_INPUT_TOKENS,
  MOCK_OUTPUT_TOKENS,
  type MockAnthropic,
  type RecordedRequest,
  startMockAnthropic,
} from '../support/mock-anthropic.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { collect, parseSse } from '../support/streams.ts';

// The native Anthropic adapter end to end: the official openai client drives
// /v1/chat/completions through the gateway, in front of a mock that speaks Anthropic's
// Messages API (JSON and SSE events) and checks its key and version headers.

const ANTHROPIC_KEY = 'sk-ant-upstream-key';
const MODELS = ['claude-sonnet-4-5', 'claude-haiku-4-5', 'cached-model', 'error-429', 'error-500', 'error-401', 'error-529'];
const STREAM_MODELS = ['stream-error', 'stream-error-first'];
/** cached-model: 12 plain prompt tokens at $3, 100 cache reads at $0.30, 20 cache writes at $3.75, 5 output at $15 per million. */
const cachedModelCost = (12 * 3 + 100 * 0.3 + 20 * 3.75 + 5 * 15) / 1e6;

const configYaml = (mock: MockAnthropic): string =>
  [
    'providers:',
    '  claude:',
    '    type: anthropic',
    `    api_key: ${ANTHROPIC_KEY}`,
    `    base_url: ${mock.url}`,
    'pricing:',
    '  cached-model: { input_per_mtok: 3, output_per_mtok: 15, cached_input_per_mtok: 0.3, cache_write_per_mtok: 3.75 }',
    '',
  ].join('\n');

type WithProvider<T> = T & { provider?: unknown };

const messages: ChatCompletionMessageParam[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Say hello' },
];
const weatherTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

function messagesRequests(mock: MockAnthropic): RecordedRequest[] {
  return mock.requests.filter((recorded) => recorded.method === 'POST' && recorded.path === '/v1/messages');
}

function lastMessagesBody(mock: MockAnthropic): Record<string, unknown> {
  const last = messagesRequests(mock).at(-1);
  expect(last, 'the mock received no Messages request').toBeDefined();
  return last?.body as Record<string, unknown>;
}

describe('native Anthropic adapter on /v1/chat/completions', () => {
  let mock: MockAnthropic;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: OpenAI;

  beforeAll(async () => {
    // A small delay between frames lets a stream start before a later error event breaks it.
    mock = await startMockAnthropic({ apiKey: ANTHROPIC_KEY, models: [...MODELS, ...STREAM_MODELS, 'tool-model'], chunkDelayMs: 5 });
    database = await createGatewayDatabase('sqlite');
    gateway = await startGateway({ env: { MASTER_KEY, ...database.env }, configYaml: configYaml(mock) });
    storage = await database.open(gateway);
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await mock?.close();
  });

  beforeEach(() => {
    mock.reset();
  });

  it("lists the instance's models from Anthropic's GET /v1/models", async () => {
    const listed = await listModels(gateway);
    const sonnet = listed.find((model) => model.id === 'claude/claude-sonnet-4-5');
    expect(sonnet).toMatchObject({ object: 'model', owned_by: 'claude' });
    expect(sonnet?.created).toBe(Date.UTC(2025, 0, 1) / 1000);
    expect(listed.map((model) => model.id)).toEqual(expect.arrayContaining(MODELS.map((id) => `claude/${id}`)));
  });

  it('answers a non-streaming request translated to and from the Messages API', async () => {
    const completion: WithProvider<OpenAI.ChatCompletion> = await client.chat.completions.create({
      model: 'claude/claude-sonnet-4-5',
      messages,
      max_tokens: 100,
      temperature: 0.5,
      seed: 3,
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.provider).toBe('claude');
    expect(completion.model).toBe('claude-sonnet-4-5');
    expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: MOCK_ANTHROPIC_CONTENT });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({
      prompt_tokens: MOCK_INPUT_TOKENS,
      completion_tokens: MOCK_OUTPUT_TOKENS,
      total_tokens: MOCK_INPUT_TOKENS + MOCK_OUTPUT_TOKENS,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    });
    expect(lastMessagesBody(mock)).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hello' }],
      temperature: 0.5,
    });
  });

  it("sends x-api-key and anthropic-version upstream, never the client's key", async () => {
    await client.chat.completions.create({ model: 'claude-haiku-4-5', messages });
    const [received] = messagesRequests(mock);
    expect(received?.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(received?.headers['anthropic-version']).toBe('2023-06-01');
    expect(received?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(received?.headers)).not.toContain(MASTER_KEY);
    expect(received?.rawBody).not.toContain(MASTER_KEY);
    expect((received?.body as { model?: unknown }).model).toBe('claude-haiku-4-5');
  });

  it('streams OpenAI chunks without the usage chunk when the client did not ask for it', async () => {
    const chunks: WithProvider<ChatCompletionChunk>[] = await collect(
      await client.chat.completions.create({ model: 'claude/claude-sonnet-4-5', messages, stream: true }),
    );
    for (const chunk of chunks) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.provider).toBe('claude');
      expect(chunk.usage ?? null).toBeNull();
      expect(chunk.choices).toHaveLength(1);
    }
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('tok0 tok1 tok2 tok3 tok4 ');
    expect(chunks.flatMap((chunk) => (chunk.choices[0]?.finish_reason ? [chunk.choices[0].finish_reason] : []))).toEqual(['stop']);
    expect(lastMessagesBody(mock)).toMatchObject({ stream: true });
    expect(lastMessagesBody(mock)).not.toHaveProperty('stream_options');
  });

  it('streams the usage chunk last when the client asked for it, framed as SSE with [DONE]', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('claude/claude-sonnet-4-5', { stream: true, stream_options: { include_usage: true } }),
    });
    expect(reply.status).toBe(200);
    expect(String(reply.headers['content-type'])).toMatch(/^text\/event-stream/);
    const chunks = parseSse(reply.text);
    const usageChunk = chunks.at(-1);
    expect(usageChunk?.['choices']).toEqual([]);
    expect(usageChunk?.['provider']).toBe('claude');
    expect(usageChunk?.['usage']).toMatchObject({
      prompt_tokens: MOCK_INPUT_TOKENS,
      completion_tokens: 5,
      total_tokens: MOCK_INPUT_TOKENS + 5,
    });
    expect(chunks.filter((chunk) => chunk['usage'] !== undefined && chunk['usage'] !== null)).toHaveLength(1);
  });

  it('returns tool calls and sends tool results back as tool_result blocks', async () => {
    const first = await client.chat.completions.create({
      model: 'claude/claude-sonnet-4-5',
      messages,
      tools: [weatherTool],
      tool_choice: 'required',
    });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type).toBe('function');
    const fn = call?.type === 'function' ? call.function : undefined;
    expect(fn).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(lastMessagesBody(mock)).toMatchObject({
      tools: [{ name: 'get_weather', description: 'Current weather of a city', input_schema: weatherTool.function.parameters }],
      tool_choice: { type: 'any' },
    });
    const followUp: ChatCompletionMessageParam[] = [
      ...messages,
      first.choices[0]?.message as ChatCompletionMessageParam,
      { role: 'tool', tool_call_id: call?.id ?? '', content: '18°C' },
    ];
    await client.chat.completions.create({ model: 'claude/claude-sonnet-4-5', messages: followUp });
    expect((lastMessagesBody(mock)['messages'] as unknown[]).slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: call?.id, name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call?.id, content: '18°C' }] },
    ]);
  });

  it('streams tool calls as OpenAI tool_call deltas', async () => {
    const chunks = await collect(
      await client.chat.completions.create({ model: 'claude/claude-sonnet-4-5', messages, tools: [weatherTool], stream: true }),
    );
    let id = '';
    let name = '';
    let args = '';
    for (const chunk of chunks) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        expect(delta.index).toBe(0);
        id += delta.id ?? '';
        name += delta.function?.name ?? '';
        args += delta.function?.arguments ?? '';
      }
    }
    expect(id).toMatch(/^toolu_mock_/);
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(chunks.flatMap((chunk) => (chunk.choices[0]?.finish_reason ? [chunk.choices[0].finish_reason] : []))).toEqual(['tool_calls']);
  });

  it.each([
    ['error-429', 429, 'rate_limit_error', 'mock anthropic error 429'],
    ['error-500', 500, 'provider_error', 'mock anthropic error 500'],
    ['error-401', 401, 'authentication_error', 'mock anthropic error 401'],
    ['error-529', 529, 'provider_error', 'Overloaded'],
  ])('maps an upstream %s to %i %s with the upstream message', async (model, status, type, message) => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody(`claude/${model}`) });
    const error = expectEnvelope(reply, { status, type, provider: 'claude' });
    expect(error.message).toBe(message);
    if (status === 429) expect(reply.headers['retry-after']).toBe('7');
  });

  it('rejects what Anthropic cannot honour before any upstream call', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('claude/claude-sonnet-4-5', { n: 2 }),
    });
    expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: 'n' });
    expect(messagesRequests(mock)).toHaveLength(0);
  });

  it('answers a stream that opens with an error event as a JSON error', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('claude/stream-error-first', { stream: true }),
    });
    const error = expectEnvelope(reply, { status: 529, type: 'provider_error', provider: 'claude' });
    expect(error.message).toBe('Overloaded');
  });

  it('ends a stream broken by an error event with the error envelope, without [DONE]', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('claude/stream-error', { stream: true }),
    });
    expect(reply.status).toBe(200);
    const frames = reply.text.split('\n\n').filter((frame) => frame !== '');
    expect(frames.at(-1)).not.toBe('data: [DONE]');
    const last = parseJson(frames.at(-1)?.slice('data: '.length) ?? '');
    expect(last['error']).toMatchObject({ type: 'provider_error', message: 'Overloaded', provider: 'claude' });
    expect(reply.text).toContain('"content":"tok1 "');
  });

  it('records usage with cache tokens, priced by reads and writes', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'claude/cached-model', messages }).withResponse();
    expect(data.usage).toMatchObject({
      prompt_tokens: MOCK_INPUT_TOKENS + 120,
      completion_tokens: MOCK_OUTPUT_TOKENS,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
    });
    const record = await usageRecordOf(storage, response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ provider: 'claude', model: 'cached-model', promptTokens: 132, completionTokens: 5, totalTokens: 137 });
    expect(record.costUsd).toBeCloseTo(cachedModelCost, 12);
    expect(record.usage?.['raw_usage']).toMatchObject({ input_tokens: 12, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 });
  });

  it('records the usage of a stream whose client did not ask for it', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'claude/cached-model', messages, stream: true })
      .withResponse();
    const chunks = await collect(stream);
    expect(chunks.every((chunk) => !chunk.usage)).toBe(true);
    const record = await usageRecordOf(storage, response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ stream: true, status: 200, promptTokens: 132, completionTokens: 5 });
    const rows = await adminUsage(gateway, { group_by: 'model', model: 'cached-model' });
    expect(rows.get('cached-model')?.prompt_tokens).toBeGreaterThanOrEqual(132);
    const own = await callJson(gateway, '/v1/usage', 200);
    expect((own['usage'] as { prompt_tokens: number }).prompt_tokens).toBeGreaterThanOrEqual(132);
  });
});
