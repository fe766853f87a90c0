import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { MOCK_ANTHROPIC_CONTENT, MOCK_INPUT_TOKENS, MOCK_OUTPUT_TOKENS, MOCK_TOOL_INPUT, startMockAnthropic } from './mock-anthropic.ts';
import type { MockAnthropic } from './mock-anthropic.ts';

// The mock Anthropic upstream checked with Anthropic's official SDK: if the SDK reads its
// answers, streams and errors, the gateway's adapter is tested against the real wire format.

const KEY = 'sk-ant-mock';

describe('mock Anthropic upstream', () => {
  let mock: MockAnthropic;
  let client: Anthropic;

  beforeAll(async () => {
    mock = await startMockAnthropic({ apiKey: KEY, models: ['claude-a', 'claude-b', 'claude-c'] });
    client = new Anthropic({ apiKey: KEY, baseURL: mock.url.replace(/\/v1$/, ''), maxRetries: 0 });
  });

  afterAll(async () => {
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  it('answers a message and records the request with its headers', async () => {
    const message = await client.messages.create({ model: 'claude-a', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.content).toEqual([{ type: 'text', text: MOCK_ANTHROPIC_CONTENT }]);
    expect(message.usage).toMatchObject({ input_tokens: MOCK_INPUT_TOKENS, output_tokens: MOCK_OUTPUT_TOKENS });
    expect(message.stop_reason).toBe('end_turn');
    const [recorded] = mock.requests;
    expect(recorded?.path).toBe('/v1/messages');
    // This SDK sends the key as a bearer token and its own API version.
    expect(recorded?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(recorded?.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('streams text and tool_use events the SDK assembles', async () => {
    const text = await client.messages
      .stream({ model: 'claude-a', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
      .finalMessage();
    expect(text.content).toHaveLength(1);
    expect(text.content[0]).toMatchObject({ type: 'text', text: 'tok0 tok1 tok2 tok3 tok4 ' });
    const tools = [{ name: 'lookup', input_schema: { type: 'object' as const, properties: {} } }];
    const call = await client.messages
      .stream({ model: 'claude-a', max_tokens: 10, tools, messages: [{ role: 'user', content: 'Hi' }] })
      .finalMessage();
    expect(call.content[0]).toMatchObject({ type: 'tool_use', name: 'lookup', input: MOCK_TOOL_INPUT });
    expect(call.stop_reason).toBe('tool_use');
  });

  it('answers errors in Anthropic envelope by magic model and rejects unknown fields', async () => {
    const statusOf = (model: string, extra: Record<string, unknown> = {}) =>
      client.messages.create({ model, max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }], ...extra }).then(
        () => 200,
        (error: unknown) => (error instanceof Anthropic.APIError ? error.status : -1),
      );
    expect(await statusOf('error-429')).toBe(429);
    expect(await statusOf('error-529')).toBe(529);
    expect(await statusOf('claude-a', { presence_penalty: 1 })).toBe(400);
    const bad = new Anthropic({ apiKey: 'wrong', baseURL: mock.url.replace(/\/v1$/, ''), maxRetries: 0 });
    await expect(bad.messages.create({ model: 'claude-a', max_tokens: 5, messages: [] })).rejects.toMatchObject({ status: 401 });
  });

  it('breaks a stream with an error event', async () => {
    const stream = client.messages.stream({ model: 'stream-error', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    await expect(stream.finalMessage()).rejects.toThrow(/Overloaded/);
  });

  it('lists models page by page', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list({ limit: 2 })) ids.push(model.id);
    expect(ids).toEqual(['claude-a', 'claude-b', 'claude-c']);
  });
});
