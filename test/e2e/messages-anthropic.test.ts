import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { anthropicClient, rejectionOf, userTurn } from '../support/clients.ts';
import { expectAnthropicEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { bearer, rawRequest } from '../support/http.ts';
import {
  MOCK_ANTHROPIC_CONTENT,
  MOCK_INPUT_TOKENS,
  MOCK_OUTPUT_TOKENS,
  type MockAnthropic,
  startMockAnthropic,
} from '../support/mock-anthropic.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';

// /v1/messages in front of an `anthropic`-type instance: the adapter's messagesApi takes the
// request natively and the answer or events are relayed as they are (test/clients/anthropic.test.ts
// covers the fields only the native way keeps).

const MODELS = ['claude-sonnet-4-5', 'cached-model', 'stream-error', 'error-529'];

const configYaml = (mock: MockAnthropic): string =>
  [
    'providers:',
    '  claude:',
    '    type: anthropic',
    '    api_key: sk-ant-upstream',
    `    base_url: ${mock.url}`,
    `    models: [${MODELS.join(', ')}]`,
    '',
  ].join('\n');

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('POST /v1/messages with a native Anthropic provider', () => {
  let mock: MockAnthropic;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: Anthropic;

  beforeAll(async () => {
    // Frames spaced out, so that a mid-stream error arrives after the gateway has started relaying.
    mock = await startMockAnthropic({ chunkDelayMs: 20 });
    database = await createGatewayDatabase('sqlite');
    gateway = await startGateway({ env: { MASTER_KEY, UPSTREAM_RETRIES: '0', ...database.env }, configYaml: configYaml(mock) });
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

  function lastUpstreamBody(): Record<string, unknown> {
    const last = mock.requests.filter((recorded) => recorded.method === 'POST' && recorded.path === '/v1/messages').at(-1);
    expect(last, 'the mock received no Messages request').toBeDefined();
    return last?.body as Record<string, unknown>;
  }

  it('answers a non-streaming request, carrying system, max_tokens, stop sequences and metadata through', async () => {
    const messages = userTurn();
    const { data: message, response } = await client.messages
      .create({
        model: 'claude/claude-sonnet-4-5',
        max_tokens: 100,
        system: 'Be brief.',
        messages,
        stop_sequences: ['END'],
        metadata: { user_id: 'u-7' },
      })
      .withResponse();
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: MOCK_ANTHROPIC_CONTENT }],
      stop_reason: 'end_turn',
      usage: { input_tokens: MOCK_INPUT_TOKENS, output_tokens: MOCK_OUTPUT_TOKENS, cache_read_input_tokens: 0 },
    });
    expect(message.id).toMatch(/^msg_/);
    expect(lastUpstreamBody()).toMatchObject({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: 'Be brief.',
      messages,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-7' },
    });
    const record = await usageRecordOf(storage, response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ endpoint: '/v1/messages', provider: 'claude', model: 'claude-sonnet-4-5', status: 200 });
  });

  it('streams text deltas, the final message and its usage', async () => {
    const stream = client.messages.stream({ model: 'claude/claude-sonnet-4-5', max_tokens: 100, messages: userTurn() });
    const deltas: string[] = [];
    stream.on('text', (text) => deltas.push(text));
    const final = await stream.finalMessage();
    expect(deltas).toEqual(['tok0 ', 'tok1 ', 'tok2 ', 'tok3 ', 'tok4 ']);
    expect(final.content).toMatchObject([{ type: 'text', text: 'tok0 tok1 tok2 tok3 tok4 ' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: MOCK_INPUT_TOKENS, output_tokens: 5 });
    expect(lastUpstreamBody()['stream']).toBe(true);
    const record = await usageRecordOf(storage, (await stream.withResponse()).response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ endpoint: '/v1/messages', provider: 'claude', stream: true, completionTokens: 5 });
  });

  it('keeps prompt-cache token counts apart from input tokens, JSON and streamed', async () => {
    const params = { model: 'claude/cached-model', max_tokens: 50, messages: userTurn() };
    const expected = { input_tokens: MOCK_INPUT_TOKENS, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 };
    expect((await client.messages.create(params)).usage).toMatchObject({ ...expected, output_tokens: MOCK_OUTPUT_TOKENS });
    const final = await client.messages.stream({ ...params, messages: userTurn() }).finalMessage();
    expect(final.usage).toMatchObject(expected);
  });

  it('runs a tool use round trip, streamed and not, with tool_result reaching the upstream', async () => {
    const question = userTurn('Weather in Paris?');
    const first = await client.messages.create({
      model: 'claude/claude-sonnet-4-5',
      max_tokens: 100,
      messages: question,
      tools: [weatherTool],
    });
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content.find((block) => block.type === 'tool_use');
    expect(toolUse).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
    const id = toolUse?.type === 'tool_use' ? toolUse.id : '';
    const streamed = await client.messages
      .stream({
        model: 'claude/claude-sonnet-4-5',
        max_tokens: 100,
        tools: [weatherTool],
        messages: [
          ...question,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: '18C' }] },
        ],
      })
      .finalMessage();
    expect(streamed.content).toMatchObject([{ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } }]);
    const upstreamMessages = lastUpstreamBody()['messages'] as Record<string, unknown>[];
    expect(upstreamMessages.at(-2)).toMatchObject({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'get_weather' }] });
    expect(upstreamMessages.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: '18C' }] });
  });

  it("passes the upstream's overload through: 529 overloaded_error, and an error event mid-stream", async () => {
    const reply = await rawRequest(`${gateway.url}/v1/messages`, {
      headers: bearer(),
      body: { model: 'claude/error-529', max_tokens: 10, messages: userTurn() },
    });
    expectAnthropicEnvelope(reply, 529, 'overloaded_error');
    const stream = await client.messages.create({ model: 'claude/stream-error', max_tokens: 10, messages: userTurn(), stream: true });
    const events: string[] = [];
    const thrown = await rejectionOf(
      (async () => {
        for await (const event of stream) events.push(event.type);
      })(),
    );
    expect(events).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta']);
    expect(thrown).toBeInstanceOf(Anthropic.APIError);
    expect((thrown as InstanceType<typeof Anthropic.APIError>).type).toBe('overloaded_error');
  });
});
