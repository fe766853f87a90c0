import type OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { openAIClient } from '../support/clients.ts';
import { gatewayEnv, type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, chatBody, parseJson, rawRequest } from '../support/http.ts';
import {
  MOCK_COMPLETION_TOKENS,
  MOCK_CONTENT,
  MOCK_PROMPT_TOKENS,
  type MockUpstream,
  startMockUpstream,
} from '../support/mock-upstream.ts';
import { collect, parseSse } from '../support/streams.ts';
import { chatRequests, lastChatBody } from '../support/upstream.ts';

type WithProvider<T> = T & { provider?: unknown };

const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }];
const weatherTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

interface AssembledCall {
  id: string;
  type: string;
  name: string;
  arguments: string;
}

function contentOf(chunks: ChatCompletionChunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
}

function finishReasons(chunks: ChatCompletionChunk[]): string[] {
  return chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => (choice.finish_reason ? [choice.finish_reason] : [])));
}

/** Joins streamed tool-call deltas by index, as a client would. */
function assembleToolCalls(chunks: ChatCompletionChunk[]): AssembledCall[] {
  const calls: AssembledCall[] = [];
  for (const chunk of chunks) {
    for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
      const call = (calls[delta.index] ??= { id: '', type: '', name: '', arguments: '' });
      call.id += delta.id ?? '';
      call.type += delta.type ?? '';
      call.name += delta.function?.name ?? '';
      call.arguments += delta.function?.arguments ?? '';
    }
  }
  return calls;
}

describe('POST /v1/chat/completions', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model,tool-model' }) });
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  beforeEach(() => {
    mock.reset();
  });

  it('answers a non-streaming request with the content, the provider and the upstream usage', async () => {
    const completion: WithProvider<OpenAI.ChatCompletion> = await client.chat.completions.create({ model: 'openai/mock-model', messages });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content).toBe(MOCK_CONTENT);
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.provider).toBe('openai');
    expect(completion.usage).toMatchObject({
      prompt_tokens: MOCK_PROMPT_TOKENS,
      completion_tokens: MOCK_COMPLETION_TOKENS,
      total_tokens: MOCK_PROMPT_TOKENS + MOCK_COMPLETION_TOKENS,
    });
  });

  it('sends the bare model id and the upstream key, never the client key, to the upstream', async () => {
    await client.chat.completions.create({ model: 'openai/mock-model', messages });
    const [received] = chatRequests(mock);
    expect(chatRequests(mock)).toHaveLength(1);
    expect((received?.body as { model?: unknown }).model).toBe('mock-model');
    expect(received?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(JSON.stringify(received?.headers)).not.toContain(MASTER_KEY);
    expect(received?.rawBody).not.toContain(MASTER_KEY);
  });

  it('accepts a bare model selector', async () => {
    const completion: WithProvider<OpenAI.ChatCompletion> = await client.chat.completions.create({ model: 'mock-model', messages });
    expect(completion.choices[0]?.message.content).toBe(MOCK_CONTENT);
    expect(completion.provider).toBe('openai');
    expect(lastChatBody(mock)['model']).toBe('mock-model');
  });

  it('streams without the usage chunk when the client did not ask for it', async () => {
    const stream = await client.chat.completions.create({ model: 'openai/mock-model', messages, stream: true });
    const chunks: WithProvider<ChatCompletionChunk>[] = await collect(stream);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.provider).toBe('openai');
      expect(chunk.usage ?? null).toBeNull();
      expect(chunk.choices.length).toBeGreaterThan(0);
    }
    expect(contentOf(chunks)).toMatch(/\S/);
    expect(finishReasons(chunks)).toEqual(['stop']);
    const upstream = lastChatBody(mock);
    expect(upstream['stream']).toBe(true);
    expect(upstream['stream_options']).toMatchObject({ include_usage: true });
  });

  it('streams the usage chunk with the upstream numbers when the client asked for it', async () => {
    const stream = await client.chat.completions.create({
      model: 'openai/mock-model',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: WithProvider<ChatCompletionChunk>[] = await collect(stream);
    const withUsage = chunks.filter((chunk) => chunk.usage);
    expect(withUsage).toHaveLength(1);
    const usageChunk = withUsage[0];
    expect(usageChunk).toBe(chunks.at(-1));
    expect(usageChunk?.provider).toBe('openai');
    // The mock counts one completion token per content chunk of a stream.
    const contentChunks = chunks.filter((chunk) => (chunk.choices[0]?.delta.content ?? '') !== '').length;
    expect(contentChunks).toBeGreaterThan(0);
    expect(usageChunk?.usage).toMatchObject({
      prompt_tokens: MOCK_PROMPT_TOKENS,
      completion_tokens: contentChunks,
      total_tokens: MOCK_PROMPT_TOKENS + contentChunks,
    });
  });

  it('frames a stream as text/event-stream data lines ending with [DONE]', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('openai/mock-model', { stream: true }),
    });
    expect(reply.status).toBe(200);
    expect(String(reply.headers['content-type'])).toMatch(/^text\/event-stream/);
    const chunks = parseSse(reply.text);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((chunk) => chunk['provider'] === 'openai')).toBe(true);
  });

  it('echoes the request id on a stream', async () => {
    const requestId = `e2e-${Date.now()}-stream`;
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'x-request-id': requestId },
      body: chatBody('openai/mock-model', { stream: true }),
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['x-request-id']).toBe(requestId);
  });

  it('reads a JSON body sent with a form content type, as curl does by default', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'content-type': 'application/x-www-form-urlencoded' },
      body: JSON.stringify(chatBody('openai/mock-model')),
    });
    expect(reply.status, reply.text).toBe(200);
    expect(parseJson(reply.text)['provider']).toBe('openai');
  });

  it('returns tool calls of a non-streaming answer', async () => {
    // What the upstream itself answers to the same request, asked directly.
    const direct = await rawRequest(`${mock.url}/chat/completions`, { body: { model: 'tool-model', messages, tools: [weatherTool] } });
    const upstreamCall = (parseJson(direct.text) as unknown as OpenAI.ChatCompletion).choices[0]?.message.tool_calls?.[0];
    if (upstreamCall?.type !== 'function') throw new Error('the mock answered no function tool call');
    const completion = await client.chat.completions.create({ model: 'openai/tool-model', messages, tools: [weatherTool] });
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    const calls = choice?.message.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    const call = calls[0];
    expect(call?.type).toBe('function');
    expect(typeof call?.id).toBe('string');
    expect(call?.id.length).toBeGreaterThan(0);
    if (call?.type !== 'function') throw new Error('expected a function tool call');
    expect(call.function.name).toBe(upstreamCall.function.name);
    expect(call.function.arguments).toBe(upstreamCall.function.arguments);
    expect(typeof JSON.parse(call.function.arguments)).toBe('object');
    expect(lastChatBody(mock)['tools']).toEqual([weatherTool]);
  });

  it('streams tool calls that assemble to the same call as the non-streaming answer', async () => {
    const plain = await client.chat.completions.create({ model: 'openai/tool-model', messages, tools: [weatherTool] });
    const expected = plain.choices[0]?.message.tool_calls?.[0];
    if (expected?.type !== 'function') throw new Error('expected a function tool call');
    const stream = await client.chat.completions.create({ model: 'openai/tool-model', messages, tools: [weatherTool], stream: true });
    const chunks: WithProvider<ChatCompletionChunk>[] = await collect(stream);
    expect(chunks.every((chunk) => chunk.provider === 'openai')).toBe(true);
    expect(finishReasons(chunks)).toEqual(['tool_calls']);
    const calls = assembleToolCalls(chunks);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.id.length).toBeGreaterThan(0);
    expect(calls[0]?.type).toBe('function');
    expect(calls[0]?.name).toBe(expected.function.name);
    expect(calls[0]?.arguments).toBe(expected.function.arguments);
  });

  it('routes with the provider hint and removes it before the upstream call', async () => {
    const params: ChatCompletionCreateParamsNonStreaming & { provider: string } = { model: 'mock-model', messages, provider: 'openai' };
    const completion: WithProvider<OpenAI.ChatCompletion> = await client.chat.completions.create(params);
    expect(completion.provider).toBe('openai');
    expect(completion.choices[0]?.message.content).toBe(MOCK_CONTENT);
    const upstream = lastChatBody(mock);
    expect(upstream['model']).toBe('mock-model');
    expect(Object.hasOwn(upstream, 'provider')).toBe(false);
  });

  it('accepts a provider hint together with a qualified selector', async () => {
    const params: ChatCompletionCreateParamsNonStreaming & { provider: string } = {
      model: 'openai/mock-model',
      messages,
      provider: 'openai',
    };
    const completion: WithProvider<OpenAI.ChatCompletion> = await client.chat.completions.create(params);
    expect(completion.provider).toBe('openai');
    expect(lastChatBody(mock)['model']).toBe('mock-model');
    expect(Object.hasOwn(lastChatBody(mock), 'provider')).toBe(false);
  });

  it('forwards unknown fields to the upstream', async () => {
    const params: ChatCompletionCreateParamsNonStreaming & Record<string, unknown> = {
      model: 'openai/mock-model',
      messages,
      foo_extension: 1,
      nested_extension: { keep: ['a', 'b'], flag: true },
    };
    await client.chat.completions.create(params);
    const upstream = lastChatBody(mock);
    expect(upstream['foo_extension']).toBe(1);
    expect(upstream['nested_extension']).toEqual({ keep: ['a', 'b'], flag: true });
    expect(upstream['messages']).toEqual(messages);
  });

  it('honours and echoes an inbound X-Request-ID', async () => {
    const requestId = `e2e-${Date.now()}-honoured`;
    const { response, request_id: clientRequestId } = await client.chat.completions
      .create({ model: 'openai/mock-model', messages }, { headers: { 'X-Request-ID': requestId } })
      .withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe(requestId);
    expect(clientRequestId).toBe(requestId);
  });

  it('generates a request id when the client sent none', async () => {
    const first = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('openai/mock-model') });
    const second = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('openai/mock-model') });
    expect(first.status).toBe(200);
    const firstId = first.headers['x-request-id'];
    const secondId = second.headers['x-request-id'];
    expect(typeof firstId).toBe('string');
    expect(String(firstId).length).toBeGreaterThanOrEqual(8);
    expect(secondId).not.toBe(firstId);
  });

  it('echoes the request id on error answers too', async () => {
    const requestId = `e2e-${Date.now()}-error`;
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'x-request-id': requestId },
      body: chatBody('openai/no-such-model'),
    });
    expect(reply.status).toBe(404);
    expect(reply.headers['x-request-id']).toBe(requestId);
  });
});
