import { randomUUID } from 'node:crypto';

import Anthropic from '@anthropic-ai/sdk';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { anthropicClient, rejectionOf } from '../support/clients.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, rawRequest } from '../support/http.ts';
import { MOCK_INPUT_TOKENS, MOCK_TOOL_INPUT, type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import {
  MOCK_AGENT_ANSWER,
  MOCK_AGENT_PREAMBLE,
  MOCK_CITATION,
  MOCK_SIGNATURE,
  MOCK_STOP_SEQUENCE,
  MOCK_THINKING,
} from '../support/mock-anthropic-blocks.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { parseAnthropicSse } from '../support/streams.ts';
import { eventually } from '../support/wait.ts';
import { answerAgentStep } from './openai-agent-route.ts';

// The official @anthropic-ai/sdk through the built gateway, against an upstream that speaks
// Anthropic's wire format (served natively: every field, beta header and returned field
// kept) and one that speaks OpenAI's chat wire (served through translation: what it cannot
// take is dropped, never an error).

const BETA = 'prompt-caching-2024-07-31,interleaved-thinking-2025-05-14';
// USD per million tokens of claude/rich-model: input, output, cache read, cache write.
const PRICE = { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 };

const configYaml = (anthropic: MockAnthropic, openai: MockUpstream, agent: MockUpstream): string =>
  [
    'providers:',
    // The Anthropic SDK's convention: the origin, no /v1.
    '  claude:',
    '    type: anthropic',
    '    api_key: sk-ant-upstream',
    `    base_url: ${anthropic.url.replace(/\/v1$/, '')}`,
    '    models: [claude-sonnet-4-5, rich-model, agent-model, error-529, stream-error-first, slow-stream]',
    '  claudev1:',
    '    type: anthropic',
    '    api_key: sk-ant-upstream',
    `    base_url: ${anthropic.url}`,
    '    models: [claude-sonnet-4-5]',
    '  oai:',
    '    type: openai',
    '    api_key: sk-upstream',
    `    base_url: ${openai.url}`,
    '    models: [mock-model, error-503]',
    '  agent:',
    '    type: openai-compatible',
    `    base_url: ${agent.url}`,
    '    models: [agent-model]',
    'virtual_models:',
    // A native target that is overloaded, then a translated one: failover crosses the two ways.
    '  - name: mixed',
    '    strategy: failover',
    '    targets:',
    '      - { provider: claude, model: error-529 }',
    '      - { provider: oai, model: mock-model }',
    '  - name: mixed-stream',
    '    strategy: failover',
    '    targets:',
    '      - { provider: claude, model: stream-error-first }',
    '      - { provider: oai, model: mock-model }',
    '  - name: mixed-back',
    '    strategy: failover',
    '    targets:',
    '      - { provider: oai, model: error-503 }',
    '      - { provider: claude, model: claude-sonnet-4-5 }',
    'rate_limits:',
    '  user_paths:',
    '    - path: /counted',
    '      limits: [{ period: minute, max_requests: 2 }]',
    'pricing:',
    '  claude/rich-model:',
    `    input_per_mtok: ${PRICE.input}`,
    `    output_per_mtok: ${PRICE.output}`,
    `    cached_input_per_mtok: ${PRICE.cachedInput}`,
    `    cache_write_per_mtok: ${PRICE.cacheWrite}`,
    '',
  ].join('\n');

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  cache_control: { type: 'ephemeral' },
};

/** A request using what prompt caching and extended thinking add, on every kind of block. */
function cachedRequest(model: string): Anthropic.MessageCreateParamsNonStreaming {
  const params: Anthropic.MessageCreateParamsNonStreaming = {
    model,
    max_tokens: 2048,
    system: [{ type: 'text', text: `A long system prompt ${randomUUID()}`, cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?', cache_control: { type: 'ephemeral', ttl: '5m' } }] }],
    tools: [weatherTool],
    tool_choice: { type: 'auto' },
    thinking: { type: 'enabled', budget_tokens: 1024 },
    metadata: { user_id: 'user-7' },
    service_tier: 'auto',
    stop_sequences: [MOCK_STOP_SEQUENCE],
  };
  // top_k is a field of the API that this SDK version no longer types.
  return { ...params, top_k: 5 } as Anthropic.MessageCreateParamsNonStreaming;
}

/** Cost of the rich-model answer: 12 plain input, 100 cache reads, 20 cache writes, 9 output tokens. */
const richCost = (MOCK_INPUT_TOKENS * PRICE.input + 100 * PRICE.cachedInput + 20 * PRICE.cacheWrite + 9 * PRICE.output) / 1_000_000;

describe('@anthropic-ai/sdk through the gateway', () => {
  let anthropic: MockAnthropic;
  let openai: MockUpstream;
  let agent: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: Anthropic;

  beforeAll(async () => {
    anthropic = await startMockAnthropic();
    openai = await startMockUpstream();
    agent = await startMockUpstream();
    agent.route('POST', '/chat/completions', answerAgentStep);
    database = await createGatewayDatabase('sqlite');
    gateway = await startGateway({
      env: { MASTER_KEY: 'test-master-key', UPSTREAM_RETRIES: '0', RESPONSE_CACHE_ENABLED: 'true', ...database.env },
      configYaml: configYaml(anthropic, openai, agent),
      startTimeoutMs: 60_000,
    });
    storage = await database.open(gateway);
    client = anthropicClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await Promise.all([anthropic?.close(), openai?.close(), agent?.close()]);
  });

  beforeEach(() => {
    anthropic.reset();
    openai.reset();
  });

  function upstreamMessages(path = '/v1/messages'): { body: Record<string, unknown>; headers: Record<string, unknown> }[] {
    return anthropic.requests
      .filter((recorded) => recorded.method === 'POST' && recorded.path === path)
      .map((recorded) => ({ body: recorded.body as Record<string, unknown>, headers: recorded.headers }));
  }

  it('keeps cache_control, thinking, top_k, metadata and service_tier towards an anthropic instance given as an origin', async () => {
    const params = cachedRequest('claude/rich-model');
    const { data: message, request_id: requestId } = await client.messages.create(params).withResponse();
    const [sent] = upstreamMessages();
    // Exactly the client's body, on the API's /v1 path under an origin base_url.
    expect(sent?.body).toEqual({ ...params, model: 'rich-model' });
    expect(sent?.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(sent?.headers['x-api-key']).toBe('sk-ant-upstream');
    // Everything the API returns, relayed: signed thinking, citations, the stop sequence, cache counts.
    expect(message.content).toEqual([
      { type: 'thinking', thinking: MOCK_THINKING, signature: MOCK_SIGNATURE },
      { type: 'text', text: 'The sky is blue.', citations: [MOCK_CITATION] },
    ]);
    expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: MOCK_STOP_SEQUENCE });
    expect(message.usage).toMatchObject({ input_tokens: MOCK_INPUT_TOKENS, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 });
    expect(requestId).toMatch(/\S/);
    const record = await usageRecordOf(storage, requestId ?? '');
    expect(record).toMatchObject({ endpoint: '/v1/messages', provider: 'claude', model: 'rich-model', status: 200, promptTokens: 132 });
    expect(record.costUsd).toBeCloseTo(richCost, 12);
  });

  it('streams thinking with its signature delta, citations and cache usage, and forwards betas as anthropic-beta', async () => {
    const params = { ...cachedRequest('claude/rich-model'), betas: BETA.split(',') };
    const stream = client.beta.messages.stream(params);
    const message = await stream.finalMessage();
    const { request_id: requestId, response } = await stream.withResponse();
    expect(response.headers.get('request-id')).toBe(requestId);
    const [sent] = upstreamMessages();
    expect(sent?.headers['anthropic-beta']).toBe(BETA);
    expect(sent?.body).toMatchObject({ stream: true, thinking: { type: 'enabled', budget_tokens: 1024 }, top_k: 5 });
    expect(sent?.body['system']).toEqual(params.system);
    expect(message.content[0]).toEqual({ type: 'thinking', thinking: MOCK_THINKING, signature: MOCK_SIGNATURE });
    expect(message.content[1]).toMatchObject({ type: 'text', text: 'The sky is blue.', citations: [MOCK_CITATION] });
    expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: MOCK_STOP_SEQUENCE });
    expect(message.usage).toMatchObject({ cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 9 });
    const record = await usageRecordOf(storage, requestId ?? '');
    expect(record).toMatchObject({ stream: true, status: 200, promptTokens: 132, completionTokens: 9 });
    expect(record.costUsd).toBeCloseTo(richCost, 12);
  });

  it("relays the event stream byte for byte, signature_delta included, under the client's anthropic-version", async () => {
    const body = { ...cachedRequest('claude/rich-model'), stream: true };
    const headers = { ...bearer(), 'anthropic-version': '2099-01-01' };
    const reply = await rawRequest(`${gateway.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify(body) });
    expect(reply.status).toBe(200);
    expect(upstreamMessages()[0]?.headers['anthropic-version']).toBe('2099-01-01');
    expect(reply.headers['request-id']).toBe(reply.headers['x-request-id']);
    const deltas = parseAnthropicSse(reply.text).map((frame) => (frame.data['delta'] as { type?: string } | undefined)?.type);
    expect(deltas).toEqual(expect.arrayContaining(['thinking_delta', 'signature_delta', 'citations_delta', 'text_delta']));
  });

  it('forwards fields it does not know yet, with the beta that defines them', async () => {
    const params = { ...cachedRequest('claude/claude-sonnet-4-5'), betas: ['future-2030-01-01'], future_option: { level: 3 } };
    await client.beta.messages.create(params as Anthropic.Beta.Messages.MessageCreateParamsNonStreaming);
    const [sent] = upstreamMessages();
    expect(sent?.body['future_option']).toEqual({ level: 3 });
    expect(sent?.headers['anthropic-beta']).toBe('future-2030-01-01');
  });

  it('aborts the upstream when the client leaves a native stream, and records 499', async () => {
    const controller = new AbortController();
    const body = { model: 'claude/slow-stream', max_tokens: 10, stream: true, messages: [userTurn()] };
    const response = await request(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    const requestId = String(response.headers['request-id']);
    for await (const chunk of response.body) if (String(chunk).includes('text_delta')) break;
    controller.abort();
    await anthropic.waitFor((requests) => requests.some((recorded) => recorded.aborted), 5_000);
    expect(await usageRecordOf(storage, requestId)).toMatchObject({ status: 499, stream: true, provider: 'claude' });
  });

  it('takes a base_url with /v1 as well', async () => {
    const message = await client.messages.create({ model: 'claudev1/claude-sonnet-4-5', max_tokens: 10, messages: [userTurn()] });
    expect(message.type).toBe('message');
    expect(upstreamMessages().length).toBe(1);
    // A client without anthropic-version gets the gateway's.
    const body = { model: 'claudev1/claude-sonnet-4-5', max_tokens: 10, messages: [userTurn()] };
    const reply = await rawRequest(`${gateway.url}/v1/messages`, { method: 'POST', headers: bearer(), body: JSON.stringify(body) });
    expect(reply.status).toBe(200);
    expect(upstreamMessages()[1]?.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('counts tokens natively on an anthropic instance, and estimates with a tokenizer elsewhere (x-gateway-token-count)', async () => {
    const native = await client.messages
      .countTokens({ model: 'claude/claude-sonnet-4-5', messages: [userTurn()], system: 'Be brief.' })
      .withResponse();
    expect(native.data).toEqual({ input_tokens: MOCK_INPUT_TOKENS });
    expect(native.response.headers.get('x-gateway-token-count')).toBeNull();
    expect(upstreamMessages('/v1/messages/count_tokens')[0]?.body).toMatchObject({ model: 'claude-sonnet-4-5', system: 'Be brief.' });
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
    const estimated = await client.messages
      .countTokens({ model: 'oai/mock-model', messages: [{ role: 'user', content: text }], tools: [weatherTool] })
      .withResponse();
    expect(estimated.response.headers.get('x-gateway-token-count')).toBe('estimate');
    // About 10 tokens a sentence, plus the tool definition.
    expect(estimated.data.input_tokens).toBeGreaterThan(200);
    expect(estimated.data.input_tokens).toBeLessThan(300);
    const record = await usageRecordOf(storage, estimated.request_id ?? '');
    expect(record).toMatchObject({ endpoint: '/v1/messages/count_tokens', provider: 'oai', status: 200 });
  });

  it('counts count_tokens under user-path request limits like any model call', async () => {
    const counted = anthropicClient(gateway, 'test-master-key', { 'X-User-Path': '/counted/alice' });
    const params = { model: 'oai/mock-model', messages: [userTurn()] };
    await counted.messages.countTokens(params);
    await counted.messages.countTokens({ ...params, model: 'claude/claude-sonnet-4-5' });
    const refused = await rejectionOf(counted.messages.countTokens(params));
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    expect((refused as InstanceType<typeof Anthropic.RateLimitError>).headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('sends request-id on errors too', async () => {
    const error = await rejectionOf(client.messages.create({ model: 'nope/none', max_tokens: 5, messages: [userTurn()] }));
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    expect((error as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/\S/);
  });

  it('drops what an OpenAI-wire provider cannot take instead of failing', async () => {
    const params = { ...cachedRequest('oai/mock-model'), stop_sequences: ['END'], betas: [BETA] };
    // The mock calls the first tool whenever tools are offered.
    const message = await client.beta.messages.create(params);
    expect(message.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather' });
    const stream = client.beta.messages.stream(params);
    expect((await stream.finalMessage()).content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather' });
    const chat = openai.requests.filter((recorded) => recorded.path === '/v1/chat/completions').map((recorded) => recorded.rawBody);
    expect(chat).toHaveLength(2);
    for (const body of chat) expect(body).not.toMatch(/cache_control|thinking|top_k|service_tier|betas/);
  });

  it('answers a repeated native request from the response cache, JSON and streamed, as the first client got it', async () => {
    const params = cachedRequest('claude/rich-model');
    const first = await client.messages.create(params).withResponse();
    const second = await client.messages.create(params).withResponse();
    expect(second.response.headers.get('x-cache')).toBe('HIT');
    expect(second.data).toEqual(first.data);
    const streamed = { ...params, stream: true };
    const live = await rawRequest(`${gateway.url}/v1/messages`, { method: 'POST', headers: bearer(), body: JSON.stringify(streamed) });
    const hit = await rawRequest(`${gateway.url}/v1/messages`, { method: 'POST', headers: bearer(), body: JSON.stringify(streamed) });
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.text).toBe(live.text);
    expect(upstreamMessages()).toHaveLength(2);
    expect(await usageRecordOf(storage, second.request_id ?? '')).toMatchObject({ cacheHit: true, costUsd: 0 });
  });

  it('fails over between native and translated targets of a virtual model, JSON and streamed', async () => {
    const overloaded = await client.messages.create({ model: 'mixed', max_tokens: 10, messages: [userTurn()] }).withResponse();
    expect(overloaded.data).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text' }] });
    // Each executed attempt is recorded: the overloaded native one and the translated one that answered.
    const records = await eventually(async () => {
      const found = await storage.usage.findByRequestId(overloaded.request_id ?? '');
      return found.length === 2 ? found : undefined;
    }, 'two usage records');
    expect(records.map(({ provider, model, status }) => ({ provider, model, status })).sort((a, b) => a.status - b.status)).toEqual([
      { provider: 'oai', model: 'mock-model', status: 200 },
      { provider: 'claude', model: 'error-529', status: 529 },
    ]);
    const streamed = await client.messages.stream({ model: 'mixed-stream', max_tokens: 10, messages: [userTurn()] }).finalMessage();
    expect(streamed.content[0]).toMatchObject({ type: 'text' });
    expect(upstreamMessages().map((sent) => sent.body['model'])).toEqual(['error-529', 'stream-error-first']);
    const back = await client.messages.create({ model: 'mixed-back', max_tokens: 10, messages: [userTurn()] });
    expect(back.id).toMatch(/^msg_mock_/);
  });

  it.each([
    ['natively (anthropic wire)', 'claude/agent-model'],
    ['through chat translation (openai wire)', 'agent/agent-model'],
  ])('runs a multi-step tool loop where the model writes text before its tool call, %s', async (_name, model) => {
    for (const streamed of [false, true]) {
      const messages: Anthropic.MessageParam[] = [userTurn('Weather in Paris?')];
      const create = (): Promise<Anthropic.Message> => {
        const params = { model, max_tokens: 256, tools: [weatherTool], messages };
        return streamed ? client.messages.stream(params).finalMessage() : client.messages.create(params);
      };
      const step = await create();
      expect(step.stop_reason).toBe('tool_use');
      expect(step.content[0]).toMatchObject({ type: 'text', text: MOCK_AGENT_PREAMBLE });
      const call = step.content[1];
      expect(call).toMatchObject({ type: 'tool_use', name: 'get_weather', input: MOCK_TOOL_INPUT });
      messages.push({ role: 'assistant', content: step.content });
      const id = call?.type === 'tool_use' ? call.id : '';
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'sunny' }] });
      const last = await create();
      expect(last.stop_reason).toBe('end_turn');
      expect(last.content).toEqual([expect.objectContaining({ type: 'text', text: MOCK_AGENT_ANSWER })]);
    }
  });
});

function userTurn(text = 'Say hello'): Anthropic.MessageParam {
  return { role: 'user', content: `${text} (${randomUUID()})` };
}
