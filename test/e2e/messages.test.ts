import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { anthropicClient, userTurn } from '../support/clients.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, rawRequest } from '../support/http.ts';
import {
  MOCK_COMPLETION_TOKENS,
  MOCK_CONTENT,
  MOCK_PROMPT_TOKENS,
  type MockUpstream,
  startMockUpstream,
} from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { parseAnthropicSse } from '../support/streams.ts';
import { chatRequests, lastChatBody } from '../support/upstream.ts';

// CONTRACT section 5 and issue 6: POST /v1/messages speaks Anthropic's Messages dialect in and
// out with an OpenAI-compatible provider behind it, through the chat pipeline (usage, cache),
// driven by the official @anthropic-ai/sdk client.

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('POST /v1/messages with an OpenAI-compatible provider', () => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: Anthropic;

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createGatewayDatabase('sqlite');
    const env = gatewayEnv(mock, { OPENAI_MODELS: 'mock-model,slow-stream', RESPONSE_CACHE_ENABLED: 'true', ...database.env });
    gateway = await startGateway({ env });
    storage = await database.open(gateway);
    client = anthropicClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  it('answers a non-streaming request in Anthropic shape and records usage under /v1/messages', async () => {
    const { data: message, response } = await client.messages
      .create({ model: 'openai/mock-model', max_tokens: 64, messages: userTurn(), stop_sequences: ['END'], metadata: { user_id: 'u-1' } })
      .withResponse();
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'mock-model',
      content: [{ type: 'text', text: MOCK_CONTENT }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: MOCK_PROMPT_TOKENS, output_tokens: MOCK_COMPLETION_TOKENS, cache_read_input_tokens: 0 },
    });
    expect(message.id).toMatch(/^msg_/);
    expect(response.headers.get('x-cache')).toBeNull();
    const upstream = lastChatBody(mock);
    expect(upstream).toMatchObject({ model: 'mock-model', max_tokens: 64, stop: ['END'], user: 'u-1' });
    expect(upstream['messages']).toEqual([{ role: 'user', content: expect.stringMatching(/^Say hello/) }]);
    const record = await usageRecordOf(storage, response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ endpoint: '/v1/messages', provider: 'openai', model: 'mock-model', status: 200 });
    expect(record).toMatchObject({ promptTokens: MOCK_PROMPT_TOKENS, completionTokens: MOCK_COMPLETION_TOKENS, stream: false });
  });

  it('sends the system prompt (string or text blocks) to the upstream as a system message', async () => {
    await client.messages.create({ model: 'openai/mock-model', max_tokens: 16, system: 'You are terse.', messages: userTurn() });
    expect((lastChatBody(mock)['messages'] as unknown[])[0]).toEqual({ role: 'system', content: 'You are terse.' });
    const system: Anthropic.TextBlockParam[] = [
      { type: 'text', text: 'Rule one.' },
      { type: 'text', text: 'Rule two.', cache_control: { type: 'ephemeral' } },
    ];
    await client.messages.create({ model: 'openai/mock-model', max_tokens: 16, system, messages: userTurn() });
    expect((lastChatBody(mock)['messages'] as unknown[])[0]).toEqual({ role: 'system', content: 'Rule one.\nRule two.' });
  });

  it('streams text deltas, the final message and its usage (messages.stream)', async () => {
    const stream = client.messages.stream({ model: 'openai/mock-model', max_tokens: 64, messages: userTurn() });
    const deltas: string[] = [];
    stream.on('text', (text) => deltas.push(text));
    const final = await stream.finalMessage();
    expect(deltas).toEqual(['tok0 ', 'tok1 ', 'tok2 ', 'tok3 ', 'tok4 ']);
    expect(final.content).toMatchObject([{ type: 'text', text: 'tok0 tok1 tok2 tok3 tok4 ' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: MOCK_PROMPT_TOKENS, output_tokens: 5 });
    // The gateway asked the upstream for the usage chunk although the client cannot ask for it.
    expect(lastChatBody(mock)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const requestId = (await stream.withResponse()).response.headers.get('x-request-id') ?? '';
    const record = await usageRecordOf(storage, requestId);
    expect(record).toMatchObject({
      endpoint: '/v1/messages',
      status: 200,
      stream: true,
      promptTokens: MOCK_PROMPT_TOKENS,
      completionTokens: 5,
    });
  });

  it('streams the event sequence of Anthropic (create with stream: true, and on the wire)', async () => {
    const stream = await client.messages.create({ model: 'openai/mock-model', max_tokens: 64, messages: userTurn(), stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      ...Array<string>(5).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const body = { model: 'openai/mock-model', max_tokens: 64, messages: userTurn(), stream: true };
    const reply = await rawRequest(`${gateway.url}/v1/messages`, { headers: bearer(), body });
    expect(reply.status).toBe(200);
    expect(String(reply.headers['content-type'])).toMatch(/^text\/event-stream/);
    const frames = parseAnthropicSse(reply.text);
    expect(frames.at(-2)?.data).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } });
  });

  it('runs a tool use round trip: tool_use out, tool_result back as a tool message', async () => {
    const question = userTurn('Weather in Paris?');
    const first = await client.messages.create({
      model: 'openai/mock-model',
      max_tokens: 64,
      messages: question,
      tools: [weatherTool],
      tool_choice: { type: 'any' },
    });
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content.find((block) => block.type === 'tool_use');
    expect(toolUse).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
    expect(lastChatBody(mock)).toMatchObject({
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherTool.input_schema } }],
      tool_choice: 'required',
    });
    const id = toolUse?.type === 'tool_use' ? toolUse.id : '';
    await client.messages.create({
      model: 'openai/mock-model',
      max_tokens: 64,
      tools: [weatherTool],
      messages: [
        ...question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: '18C and sunny' }] },
      ],
    });
    const messages = lastChatBody(mock)['messages'] as Record<string, unknown>[];
    expect(messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: id, content: '18C and sunny' },
    ]);
  });

  it('streams a tool call as a tool_use block with its input', async () => {
    const stream = client.messages.stream({ model: 'openai/mock-model', max_tokens: 64, messages: userTurn(), tools: [weatherTool] });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^call_mock_/), name: 'get_weather', input: { city: 'Paris' } },
    ]);
  });

  it('answers a repeated request from the response cache, in Anthropic shape, JSON and streamed', async () => {
    const params = { model: 'openai/mock-model', max_tokens: 64, messages: userTurn() };
    const first = await client.messages.create(params).withResponse();
    const second = await client.messages.create(params).withResponse();
    expect(second.response.headers.get('x-cache')).toBe('HIT');
    expect(second.data).toEqual(first.data);
    const streamParams = { ...params, messages: userTurn() };
    const firstFinal = await client.messages.stream(streamParams).finalMessage();
    const replayed = client.messages.stream(streamParams);
    const replayedFinal = await replayed.finalMessage();
    expect((await replayed.withResponse()).response.headers.get('x-cache')).toBe('HIT');
    expect(replayedFinal.content).toEqual(firstFinal.content);
    expect(replayedFinal.usage.output_tokens).toBe(5);
    expect(chatRequests(mock)).toHaveLength(2);
    const record = await usageRecordOf(storage, second.response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ endpoint: '/v1/messages', cacheHit: true });
  });

  it('aborts the upstream when the client leaves a stream', async () => {
    const controller = new AbortController();
    const stream = await client.messages.create(
      { model: 'openai/slow-stream', max_tokens: 64, messages: userTurn(), stream: true },
      { signal: controller.signal },
    );
    let deltas = 0;
    try {
      for await (const event of stream) {
        if (event.type === 'content_block_delta') deltas += 1;
        if (deltas === 2) controller.abort();
      }
    } catch (error) {
      expect(String(error)).toMatch(/abort/i);
    }
    await mock.waitFor((requests) => requests.some((recorded) => recorded.path.endsWith('/chat/completions') && recorded.aborted), 3000);
    expect(deltas).toBe(2);
  });
});
