import type OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openAIClient } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import {
  MOCK_ANTHROPIC_CONTENT,
  MOCK_INPUT_TOKENS,
  MOCK_OUTPUT_TOKENS,
  MOCK_TOOL_INPUT,
  type MockAnthropic,
  startMockAnthropic,
} from '../support/mock-anthropic.ts';

// POST /v1/responses behind the native Anthropic adapter: the Responses request is
// translated to chat, which the adapter turns into a Messages request, and back.

describe('POST /v1/responses with an anthropic instance', () => {
  let mock: MockAnthropic;
  let gateway: GatewayProcess;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockAnthropic({ apiKey: 'sk-ant-upstream' });
    gateway = await startGateway({
      env: {
        MASTER_KEY,
        ANTHROPIC_API_KEY: 'sk-ant-upstream',
        ANTHROPIC_BASE_URL: mock.url,
        ANTHROPIC_MODELS: 'claude-sonnet-4-5,tool-model',
      },
    });
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('answers a Response object, instructions sent as the system prompt', async () => {
    const response = await client.responses.create({
      model: 'anthropic/claude-sonnet-4-5',
      instructions: 'Be brief',
      input: 'Say hello',
      max_output_tokens: 100,
    });
    expect(response.output_text).toBe(MOCK_ANTHROPIC_CONTENT);
    expect(response.status).toBe('completed');
    expect(response.usage).toMatchObject({ input_tokens: MOCK_INPUT_TOKENS, output_tokens: MOCK_OUTPUT_TOKENS });
    const upstream = mock.requests.filter((recorded) => recorded.path === '/v1/messages').at(-1);
    expect(upstream?.body).toMatchObject({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: 'Be brief',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
  });

  it('streams the events, and turns tool_use into a function_call item', async () => {
    const events: ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'hi', stream: true }))
      events.push(event);
    expect(events[0]?.type).toBe('response.created');
    expect(events.at(-1)?.type).toBe('response.completed');
    const text = events.map((event) => (event.type === 'response.output_text.delta' ? event.delta : '')).join('');
    expect(text).toMatch(/^tok0 /);

    const response = await client.responses.create({
      model: 'anthropic/tool-model',
      input: 'Weather in Paris?',
      tools: [
        { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
      ],
    });
    expect(response.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'get_weather' })]);
    expect(JSON.parse((response.output[0] as { arguments: string }).arguments)).toEqual(MOCK_TOOL_INPUT);
  });
});
