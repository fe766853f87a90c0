import type OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { openAIClient } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { createServiceAccount, type ServiceAccount } from '../support/mock-google-oauth.ts';
import {
  MOCK_GEMINI_TEXT,
  MOCK_GEMINI_THOUGHT,
  MOCK_GEMINI_THOUGHT_TOKENS,
  MOCK_SAFETY_RATINGS,
  MOCK_THOUGHT_SIGNATURE,
  type MockVertex,
  startMockVertex,
  type VertexCall,
} from '../support/mock-vertex.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { collect } from '../support/streams.ts';

// Gemini models on a vertex instance go through the native Gemini converters: thinking
// (reasoning_effort -> thinkingConfig, thoughts as reasoning_content, thinking tokens billed),
// safety ratings kept, tool schemas cleaned, thought signatures returned and sent back;
// embeddings take the same extra task_type. The official openai client drives the built
// gateway in front of the mock Vertex AI.

const GEMINI = 'gemini-2.5-flash';

type Extra<T> = T & Record<string, unknown>;

const weatherTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { city: { type: 'string', default: 'Paris' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
};

describe('vertex provider: Gemini through the native converters', () => {
  let mock: MockVertex;
  let gateway: GatewayProcess;
  let database: GatewayDatabase;
  let storage: Storage;
  let client: OpenAI;

  const lastCall = (): VertexCall => {
    const call = mock.calls.at(-1);
    expect(call, 'the mock Vertex received no call').toBeDefined();
    return call as VertexCall;
  };

  beforeAll(async () => {
    const accounts: ServiceAccount[] = [];
    mock = await startMockVertex({ accounts });
    const account = createServiceAccount('test-project', mock.tokenUri, 'gateway');
    accounts.push(account);
    database = await createGatewayDatabase('sqlite');
    const configYaml = `
providers:
  vertex:
    type: vertex
    project: test-project
    location: us-east5
    credentials_json: '${JSON.stringify(account.json)}'
    base_url: ${mock.url}
    models: [${GEMINI}, text-embedding-005]
`;
    gateway = await startGateway({ env: { MASTER_KEY, ...database.env }, configYaml });
    storage = await database.open(gateway);
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await storage?.close();
    await gateway?.stop();
    await mock?.close();
  });

  it('maps reasoning_effort to thinkingConfig, returns thoughts and safety ratings, bills thinking tokens', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: `vertex/${GEMINI}`, messages: [{ role: 'user', content: 'Say hello' }], reasoning_effort: 'medium' })
      .withResponse();
    expect(lastCall().body['generationConfig']).toEqual({ thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } });
    const choice = data.choices[0] as Extra<OpenAI.ChatCompletion.Choice>;
    expect(choice.message.content).toBe(MOCK_GEMINI_TEXT.join(''));
    expect((choice.message as Extra<OpenAI.ChatCompletionMessage>)['reasoning_content']).toBe(MOCK_GEMINI_THOUGHT);
    expect(choice['safety_ratings']).toEqual(MOCK_SAFETY_RATINGS);
    expect(data.usage).toMatchObject({
      prompt_tokens: 9,
      completion_tokens: 4 + MOCK_GEMINI_THOUGHT_TOKENS,
      completion_tokens_details: { reasoning_tokens: MOCK_GEMINI_THOUGHT_TOKENS },
    });
    const record = await usageRecordOf(storage, response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ provider: 'vertex', promptTokens: 9, completionTokens: 4 + MOCK_GEMINI_THOUGHT_TOKENS });
  });

  it('streams thoughts as reasoning_content, the finish chunk with safety ratings, thinking tokens in usage', async () => {
    const stream = await client.chat.completions.create({
      model: `vertex/${GEMINI}`,
      messages: [{ role: 'user', content: 'Say hello' }],
      reasoning_effort: 'low',
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = await collect(stream);
    expect(lastCall().body['generationConfig']).toEqual({ thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } });
    const deltas = chunks.map((chunk) => (chunk.choices[0]?.delta ?? {}) as Extra<ChatCompletionChunk.Choice.Delta>);
    expect(deltas.map((delta) => delta['reasoning_content'] ?? '').join('')).toBe(MOCK_GEMINI_THOUGHT);
    expect(deltas.map((delta) => delta.content ?? '').join('')).toBe(MOCK_GEMINI_TEXT.join(''));
    const finish = chunks.find((chunk) => chunk.choices[0]?.finish_reason === 'stop');
    expect((finish?.choices[0] as Extra<ChatCompletionChunk.Choice> | undefined)?.['safety_ratings']).toEqual(MOCK_SAFETY_RATINGS);
    expect(chunks.at(-1)?.usage).toMatchObject({ completion_tokens_details: { reasoning_tokens: MOCK_GEMINI_THOUGHT_TOKENS } });
  });

  it('cleans tool schemas and round-trips the thought signature of a function call', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather?' }];
    const first = await client.chat.completions.create({
      model: `vertex/${GEMINI}`,
      messages,
      tools: [weatherTool],
      reasoning_effort: 'high',
    });
    expect(lastCall().body['tools']).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        ],
      },
    ]);
    const call = first.choices[0]?.message.tool_calls?.[0] as Extra<OpenAI.ChatCompletionMessageToolCall>;
    expect(call).toMatchObject({ function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(call['extra_content']).toEqual({ google: { thought_signature: MOCK_THOUGHT_SIGNATURE } });
    messages.push(first.choices[0]?.message as ChatCompletionMessageParam, { role: 'tool', tool_call_id: call.id, content: '{"temp":18}' });
    await client.chat.completions.create({ model: `vertex/${GEMINI}`, messages, tools: [weatherTool] });
    expect(lastCall().body['contents']).toEqual([
      { role: 'user', parts: [{ text: 'Weather?' }] },
      {
        role: 'model',
        parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: MOCK_THOUGHT_SIGNATURE }],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 18 } } }] },
    ]);
  });

  it('sends an embeddings task_type on each predict instance, as gemini instances take it', async () => {
    const body = { model: 'vertex/text-embedding-005', input: ['a query'], encoding_format: 'float', task_type: 'RETRIEVAL_QUERY' };
    const data = await client.embeddings.create(body as OpenAI.EmbeddingCreateParams);
    expect(data.data[0]?.embedding).toEqual([0.5, -0.25, 0.125]);
    expect(lastCall()).toMatchObject({ method: 'predict', body: { instances: [{ content: 'a query', task_type: 'RETRIEVAL_QUERY' }] } });
  });
});
