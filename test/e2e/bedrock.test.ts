import type { ChatCompletionChunk, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { openAIClient } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, chatBody, listModels, parseJson, rawRequest } from '../support/http.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { MOCK_BEDROCK_TEXT, type MockBedrock, startMockBedrock } from '../support/mock-bedrock.ts';
import { MOCK_COMPLETION_TOKENS, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { parseSse } from '../support/streams.ts';
import { eventually } from '../support/wait.ts';

// The Bedrock adapter end to end: the official openai client drives the gateway in front of
// a mock that speaks Bedrock's Converse / ConverseStream (binary event stream) / InvokeModel
// and verifies every request's SigV4 signature (or Bedrock API key).

const SONNET = 'us.anthropic.claude-3-5-sonnet-20241022-v2:0';
const ARN = 'arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20241022-v2:0';
const MODELS = [
  SONNET,
  ARN,
  'throttled',
  'unavailable',
  'model-timeout',
  'stream-exception',
  'stream-throttled',
  'amazon.titan-embed-text-v2:0',
  'cohere.embed-english-v3',
];
const credentials = new Map([
  ['AKIDYAML', 'yaml-secret-key'],
  ['AKIDENV', 'env-secret-key'],
]);

const configYaml = (bedrock: MockBedrock, openai: MockUpstream, anthropic: MockAnthropic): string => `
providers:
  aws:
    type: bedrock
    base_url: ${bedrock.url}
    region: us-west-2
    aws_access_key_id: AKIDYAML
    aws_secret_access_key: yaml-secret-key
    aws_session_token: yaml-session-token
    models: ${JSON.stringify(MODELS)}
  aws-env:
    type: bedrock
    base_url: ${bedrock.url}
    models: ["${SONNET}"]
  aws-key:
    type: bedrock
    base_url: ${bedrock.url}
    api_key: bedrock-api-key-1
    models: ["${SONNET}"]
  aws-bad:
    type: bedrock
    base_url: ${bedrock.url}
    aws_access_key_id: AKIDYAML
    aws_secret_access_key: wrong-secret
    models: ["${SONNET}"]
  aws-listed:
    type: bedrock
    base_url: ${bedrock.url}
    region: ap-northeast-1
    aws_access_key_id: AKIDYAML
    aws_secret_access_key: yaml-secret-key
  claude:
    type: anthropic
    api_key: sk-ant-key
    base_url: ${anthropic.url}
    models: [error-429]
  backup:
    type: openai
    api_key: ${UPSTREAM_KEY}
    base_url: ${openai.url}
    models: [mock-model]
virtual_models:
  - name: resilient
    targets:
      - { provider: aws, model: throttled }
      - { provider: backup, model: mock-model }
  - name: chain
    targets:
      - { provider: aws, model: throttled }
      - { provider: claude, model: error-429 }
      - { provider: backup, model: mock-model }
  - name: resilient-stream
    targets:
      - { provider: aws, model: stream-throttled }
      - { provider: backup, model: mock-model }
`;

const weatherTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};

type WithProvider<T> = T & { provider?: unknown };

describe('bedrock provider', () => {
  let bedrock: MockBedrock;
  let openai: MockUpstream;
  let anthropic: MockAnthropic;
  let database: GatewayDatabase;
  let storage: Storage;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    bedrock = await startMockBedrock({ credentials, apiKeys: ['bedrock-api-key-1'] });
    openai = await startMockUpstream();
    anthropic = await startMockAnthropic({ apiKey: 'sk-ant-key', models: ['error-429'] });
    database = await createGatewayDatabase('sqlite');
    gateway = await startGateway({
      configYaml: configYaml(bedrock, openai, anthropic),
      env: {
        MASTER_KEY,
        ...database.env,
        AWS_ACCESS_KEY_ID: 'AKIDENV',
        AWS_SECRET_ACCESS_KEY: 'env-secret-key',
        AWS_REGION: 'eu-central-1',
      },
    });
    storage = await database.open(gateway);
  }, 90_000);

  afterAll(async () => {
    await gateway?.kill();
    await storage?.close();
    await Promise.all([bedrock?.close(), openai?.close(), anthropic?.close()]);
  });

  beforeEach(() => {
    // The startup listing of aws-listed is kept for the listing test.
    const listings = bedrock.requests.filter((recorded) => recorded.rawPath === '/foundation-models');
    bedrock.requests.splice(0, bedrock.requests.length, ...listings);
  });

  it('answers a chat completion through Converse, signed with SigV4 on the encoded profile id', async () => {
    const client = openAIClient(gateway);
    const completion = (await client.chat.completions.create({
      model: `aws/${SONNET}`,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ],
      max_tokens: 50,
    })) as WithProvider<Awaited<ReturnType<typeof client.chat.completions.create>>>;
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: SONNET,
      provider: 'aws',
      choices: [{ message: { role: 'assistant', content: MOCK_BEDROCK_TEXT.join('') }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 61, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 40, cache_write_tokens: 10 } },
    });
    const recorded = bedrock.requests.at(-1);
    expect(recorded).toMatchObject({ rawPath: '/model/us.anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse', model: SONNET });
    expect(recorded?.signedBy).toEqual({ accessKeyId: 'AKIDYAML', region: 'us-west-2' });
    expect(recorded?.headers['x-amz-security-token']).toBe('yaml-session-token');
    expect(recorded?.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Say hello' }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 50 },
    });
  });

  it('takes an inference profile ARN as the model id', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody(`aws/${ARN}`) });
    expect(reply.status, reply.text).toBe(200);
    expect(bedrock.requests.at(-1)?.rawPath).toBe(`/model/${encodeURIComponent(ARN)}/converse`);
  });

  it('uses the AWS_* variables for an instance without keys, and a Bedrock API key as bearer', async () => {
    const client = openAIClient(gateway);
    await client.chat.completions.create({ model: `aws-env/${SONNET}`, messages: [{ role: 'user', content: 'hi' }] });
    expect(bedrock.requests.at(-1)?.signedBy).toEqual({ accessKeyId: 'AKIDENV', region: 'eu-central-1' });
    await client.chat.completions.create({ model: `aws-key/${SONNET}`, messages: [{ role: 'user', content: 'hi' }] });
    expect(bedrock.requests.at(-1)?.headers['authorization']).toBe('Bearer bedrock-api-key-1');
  });

  it('maps a signature AWS refuses to a 403 with its message', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody(`aws-bad/${SONNET}`) });
    const error = expectEnvelope(reply, { status: 403, type: 'authentication_error', provider: 'aws-bad' });
    expect(error.message).toBe('The request signature we calculated does not match the signature you provided.');
  });

  it('streams through ConverseStream, decoding the binary event stream', async () => {
    const client = openAIClient(gateway);
    const stream = await client.chat.completions.create({
      model: `aws/${SONNET}`,
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: WithProvider<ChatCompletionChunk>[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(MOCK_BEDROCK_TEXT.join(''));
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 61, completion_tokens: 3 });
    expect(bedrock.requests.at(-1)).toMatchObject({ action: 'converse-stream', signedBy: { accessKeyId: 'AKIDYAML' } });
  });

  it('calls tools, in JSON and in a stream', async () => {
    const client = openAIClient(gateway);
    const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];
    const completion = await client.chat.completions.create({
      model: `aws/${SONNET}`,
      messages,
      tools: [weatherTool],
      tool_choice: 'required',
    });
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        tool_calls: [{ id: 'tooluse_mock1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
    });
    expect((bedrock.requests.at(-1)?.body as Record<string, unknown>)['toolConfig']).toMatchObject({ toolChoice: { any: {} } });
    const stream = await client.chat.completions.create({ model: `aws/${SONNET}`, messages, tools: [weatherTool], stream: true });
    let args = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(finish).toBe('tool_calls');
  });

  it('embeds with Titan (one call per input) and Cohere (one batch)', async () => {
    const client = openAIClient(gateway);
    const titan = await client.embeddings.create({ model: 'aws/amazon.titan-embed-text-v2:0', input: ['hello world', 'bye'] });
    expect(titan.data.map((item) => item.index)).toEqual([0, 1]);
    expect(titan.data[0]?.embedding[0]).toBeCloseTo(1.1, 5);
    expect(titan.usage).toMatchObject({ prompt_tokens: 3 });
    const invokes = bedrock.requests.filter((recorded) => recorded.action === 'invoke');
    expect(invokes.map((recorded) => recorded.body)).toEqual([{ inputText: 'hello world' }, { inputText: 'bye' }]);
    const cohere = await client.embeddings.create({
      model: 'aws/cohere.embed-english-v3',
      input: ['a', 'bb', 'ccc'],
      encoding_format: 'float',
    });
    expect(cohere.data).toHaveLength(3);
    expect(cohere.usage).toMatchObject({ prompt_tokens: 6 });
    expect(bedrock.requests.at(-1)?.body).toEqual({ texts: ['a', 'bb', 'ccc'], input_type: 'search_document' });
  });

  it('maps ThrottlingException to 429, ServiceUnavailableException to 503, ModelTimeoutException to 504, messages kept', async () => {
    const throttled = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('aws/throttled') });
    expect(expectEnvelope(throttled, { status: 429, type: 'rate_limit_error', provider: 'aws' }).message).toBe(
      'Too many requests, please wait before trying again.',
    );
    const unavailable = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('aws/unavailable') });
    expectEnvelope(unavailable, { status: 503, type: 'provider_error', provider: 'aws' });
    const timedOut = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('aws/model-timeout') });
    expect(expectEnvelope(timedOut, { status: 504, type: 'provider_error', provider: 'aws' }).message).toBe(
      'Model has timed out in processing the request.',
    );
  });

  it('fails over from a throttled Bedrock target to OpenAI, in JSON and when the stream opens with an exception', async () => {
    const client = openAIClient(gateway);
    const completion = (await client.chat.completions.create({
      model: 'resilient',
      messages: [{ role: 'user', content: 'hi' }],
    })) as WithProvider<Awaited<ReturnType<typeof client.chat.completions.create>>>;
    expect(completion.provider).toBe('backup');
    expect(bedrock.requests.some((recorded) => recorded.model === 'throttled')).toBe(true);
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('resilient-stream', { stream: true }),
    });
    expect(reply.status, reply.text).toBe(200);
    const chunks = parseSse(reply.text);
    expect(chunks.every((chunk) => chunk['provider'] === 'backup')).toBe(true);
    expect(bedrock.requests.some((recorded) => recorded.model === 'stream-throttled')).toBe(true);
  });

  it('ends a stream broken by an exception with an error event, without [DONE]', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('aws/stream-exception', { stream: true }),
    });
    expect(reply.status).toBe(200);
    const frames = reply.text.split('\n\n').filter((frame) => frame !== '');
    expect(frames.at(-1)).not.toBe('data: [DONE]');
    const last = parseJson(frames.at(-1)?.slice('data: '.length) ?? '');
    expect(last['error']).toMatchObject({ type: 'provider_error', message: 'The model stream failed mid-way.', provider: 'aws' });
    expect(reply.text).toContain('"content":"Hello"');
  });

  it('relays native Bedrock calls through /p/{instance}/..., signed', async () => {
    const body = { messages: [{ role: 'user', content: [{ text: 'hi' }] }] };
    const reply = await rawRequest(`${gateway.url}/p/aws/model/${encodeURIComponent(SONNET)}/converse`, { headers: bearer(), body });
    expect(reply.status, reply.text).toBe(200);
    expect(parseJson(reply.text)).toMatchObject({
      stopReason: 'end_turn',
      output: { message: { content: [{ text: MOCK_BEDROCK_TEXT.join('') }] } },
    });
    expect(bedrock.requests.at(-1)).toMatchObject({ model: SONNET, body, signedBy: { accessKeyId: 'AKIDYAML', region: 'us-west-2' } });
  });

  it('lists the configured models, and the signed control-plane listing of an instance without models', async () => {
    const ids = (await listModels(gateway)).map((model) => model.id);
    expect(ids).toContain(`aws/${SONNET}`);
    expect(ids).toContain(`aws-key/${SONNET}`);
    expect(ids).toContain('aws-listed/anthropic.claude-3-5-sonnet-20241022-v2:0');
    const listing = bedrock.requests.find((recorded) => recorded.rawPath === '/foundation-models');
    expect(listing?.signedBy).toEqual({ accessKeyId: 'AKIDYAML', region: 'ap-northeast-1' });
  });

  it('charges usage to the executed provider: a Bedrock call at its price, a Bedrock -> Anthropic -> OpenAI chain to OpenAI', async () => {
    const client = openAIClient(gateway);
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const direct = await client.chat.completions.create({ model: `aws/${SONNET}`, messages }).withResponse();
    const record = await usageRecordOf(storage, direct.response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ provider: 'aws', model: SONNET, promptTokens: 61, completionTokens: 3 });
    // 11 plain input tokens at $3, 40 cache reads at $0.30, 10 cache writes at $3.75, 3 output tokens at $15 per million.
    expect(record.costUsd).toBeCloseTo((11 * 3 + 40 * 0.3 + 10 * 3.75 + 3 * 15) / 1e6, 12);
    const chained = await client.chat.completions.create({ model: 'chain', messages }).withResponse();
    expect((chained.data as WithProvider<typeof chained.data>).provider).toBe('backup');
    expect(anthropic.requests.some((recorded) => (recorded.body as { model?: unknown })?.model === 'error-429')).toBe(true);
    const chainId = chained.response.headers.get('x-request-id') ?? '';
    const attempts = await eventually(async () => {
      const found = await storage.usage.findByRequestId(chainId);
      return found.length === 3 ? found : undefined;
    }, `three usage records for ${chainId}`);
    const served = attempts.filter((attempt) => attempt.status === 200);
    expect(served).toHaveLength(1);
    expect(served[0]).toMatchObject({ provider: 'backup', model: 'mock-model', completionTokens: MOCK_COMPLETION_TOKENS });
    const failed = attempts.filter((attempt) => attempt.status !== 200);
    expect(failed.map((attempt) => [attempt.provider, attempt.status, attempt.completionTokens]).sort()).toEqual([
      ['aws', 429, 0],
      ['claude', 429, 0],
    ]);
  });
});
