import type OpenAI from 'openai';
import type { Response as OpenAIResponse, ResponseStreamEvent, Tool } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { bearer, rawRequest } from '../support/http.ts';
import { MOCK_RESPONSES_USAGE, MOCK_WEATHER_ARGUMENTS, responsesHandler } from '../support/mock-openai-extras.ts';
import {
  MOCK_COMPLETION_TOKENS,
  MOCK_CONTENT,
  MOCK_PROMPT_TOKENS,
  type MockUpstream,
  type RecordedRequest,
  startMockUpstream,
} from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { collect } from '../support/streams.ts';
import { chatRequests, lastChatBody } from '../support/upstream.ts';

// CONTRACT section 5: POST /v1/responses with the official openai client. `openai`-type
// instances serve it natively (request and answer relayed); other providers get it translated
// through chat completions (output items, streaming events, usage).

const weatherTool: Tool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: true,
};
/** What the mock's chat stream says with its default 5 chunks. */
const STREAMED_TEXT = 'tok0 tok1 tok2 tok3 tok4 ';

function postsTo(mock: MockUpstream, path: string): RecordedRequest[] {
  return mock.requests.filter((recorded) => recorded.method === 'POST' && recorded.path === path);
}

function deltasOf(events: ResponseStreamEvent[]): string {
  return events.map((event) => (event.type === 'response.output_text.delta' ? event.delta : '')).join('');
}

function completedOf(events: ResponseStreamEvent[]): OpenAIResponse {
  const last = events.at(-1);
  expect(last?.type).toBe('response.completed');
  return (last as Extract<ResponseStreamEvent, { type: 'response.completed' }>).response;
}

/** The lifecycle of a one-message stream, as OpenAI sends it. */
const messageEventTypes = [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.content_part.added',
  'response.output_text.delta',
  'response.output_text.done',
  'response.content_part.done',
  'response.output_item.done',
  'response.completed',
];

describe('POST /v1/responses', () => {
  let mock: MockUpstream;
  let proxy: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.route('POST', '/responses', responsesHandler());
    // An OpenAI-compatible server configured as type `openai`: no /responses route (404).
    proxy = await startMockUpstream();
    database = await createGatewayDatabase('sqlite');
    const configYaml = [
      'providers:',
      '  openai: { type: openai, api_key: sk-native, base_url: "' + mock.url + '", models: [mock-model, error-429] }',
      '  compat: { type: openai-compatible, api_key: sk-compat, base_url: "' + mock.url + '", models: [mock-model, tool-model] }',
      '  proxy: { type: openai, api_key: sk-proxy, base_url: "' + proxy.url + '", models: [proxied-model] }',
      '',
    ].join('\n');
    gateway = await startGateway({ env: { MASTER_KEY, SET_RATE_LIMIT_RESP__LIMITED: 'rpm=1' }, configYaml });
    storage = await database.open(gateway);
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await mock?.close();
    await proxy?.close();
  });

  beforeEach(() => {
    mock.reset();
    proxy.reset();
  });

  describe('native (type openai)', () => {
    it('relays a JSON response: output_text, provider stamped, bare model and no hint upstream', async () => {
      const response = await client.responses.create({ model: 'openai/mock-model', input: 'Say hello', instructions: 'Be brief' });
      expect(response.object).toBe('response');
      expect(response.id).toBe('resp_native_1');
      expect(response.status).toBe('completed');
      expect(response.output_text).toBe(MOCK_CONTENT);
      expect(response.usage).toEqual(MOCK_RESPONSES_USAGE);
      expect((response as unknown as { provider?: unknown }).provider).toBe('openai');

      const upstream = postsTo(mock, '/v1/responses');
      expect(upstream).toHaveLength(1);
      expect(upstream[0]?.headers.authorization).toBe('Bearer sk-native');
      expect(upstream[0]?.body).toEqual({ model: 'mock-model', input: 'Say hello', instructions: 'Be brief' });
      expect(chatRequests(mock)).toHaveLength(0);
    });

    it('strips the provider hint', async () => {
      const reply = await rawRequest(`${gateway.url}/v1/responses`, {
        headers: bearer(),
        body: { model: 'mock-model', provider: 'openai', input: 'hi' },
      });
      expect(reply.status, reply.text).toBe(200);
      expect(postsTo(mock, '/v1/responses')[0]?.body).toEqual({ model: 'mock-model', input: 'hi' });
    });

    it('relays a stream untouched: the event sequence and the final response', async () => {
      const events = await collect(await client.responses.create({ model: 'openai/mock-model', input: 'Say hello', stream: true }));
      const types = events
        .map((event) => event.type)
        .filter((type, index, all) => type !== 'response.output_text.delta' || all[index - 1] !== type);
      expect(types).toEqual(messageEventTypes);
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_event, index) => index));
      expect(deltasOf(events)).toBe(MOCK_CONTENT);
      expect(completedOf(events).usage).toEqual(MOCK_RESPONSES_USAGE);
    });

    it('returns a function call', async () => {
      const response = await client.responses.create({ model: 'openai/mock-model', input: 'Weather in Paris?', tools: [weatherTool] });
      expect(response.output).toHaveLength(1);
      expect(response.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: MOCK_WEATHER_ARGUMENTS });
      expect(response.output_text).toBe('');
    });

    it('records usage from the JSON answer and from response.completed of a stream', async () => {
      const { response: json } = await client.responses
        .create({ model: 'openai/mock-model', input: 'hi' }, { headers: { 'X-User-Path': '/resp/native' } })
        .withResponse();
      const jsonRecord = await usageRecordOf(storage, json.headers.get('x-request-id') ?? '');
      const tokens = { promptTokens: 11, completionTokens: 6, totalTokens: 17 };
      expect(jsonRecord).toMatchObject({
        endpoint: '/v1/responses',
        provider: 'openai',
        model: 'mock-model',
        userPath: '/resp/native',
        status: 200,
        stream: false,
        ...tokens,
      });

      const { data: stream, response: streamed } = await client.responses
        .create({ model: 'openai/mock-model', input: 'hi', stream: true })
        .withResponse();
      await collect(stream);
      const streamRecord = await usageRecordOf(storage, streamed.headers.get('x-request-id') ?? '');
      expect(streamRecord).toMatchObject({ endpoint: '/v1/responses', provider: 'openai', status: 200, stream: true, ...tokens });
    });
  });

  describe('translated through chat (type openai-compatible)', () => {
    it('answers a Response object built from the chat completion', async () => {
      const response = await client.responses.create({
        model: 'compat/mock-model',
        instructions: 'Be brief',
        input: 'Say hello',
        max_output_tokens: 50,
        temperature: 0.5,
        store: true,
      });
      expect(response.object).toBe('response');
      expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
      expect(response.status).toBe('completed');
      expect(response.model).toBe('mock-model');
      expect(response.output_text).toBe(MOCK_CONTENT);
      expect(response.output).toEqual([
        {
          id: expect.stringMatching(/^msg_/) as unknown,
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: MOCK_CONTENT, annotations: [], logprobs: [] }],
        },
      ]);
      expect(response.usage).toEqual({
        input_tokens: MOCK_PROMPT_TOKENS,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: MOCK_COMPLETION_TOKENS,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: MOCK_PROMPT_TOKENS + MOCK_COMPLETION_TOKENS,
      });
      expect((response as unknown as { provider?: unknown }).provider).toBe('compat');

      expect(postsTo(mock, '/v1/responses')).toHaveLength(0);
      const chat = lastChatBody(mock);
      expect(chat).toEqual({
        model: 'mock-model',
        messages: [
          { role: 'system', content: 'Be brief' },
          { role: 'user', content: 'Say hello' },
        ],
        max_tokens: 50,
        temperature: 0.5,
      });
      expect(chatRequests(mock)[0]?.headers.authorization).toBe('Bearer sk-compat');
    });

    it('streams Responses events translated from the chat stream', async () => {
      const events = await collect(await client.responses.create({ model: 'compat/mock-model', input: 'Say hello', stream: true }));
      const types = events
        .map((event) => event.type)
        .filter((type, index, all) => type !== 'response.output_text.delta' || all[index - 1] !== type);
      expect(types).toEqual(messageEventTypes);
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_event, index) => index));
      expect(deltasOf(events)).toBe(STREAMED_TEXT);
      const completed = completedOf(events);
      expect(completed.status).toBe('completed');
      expect(completed.usage).toMatchObject({ input_tokens: MOCK_PROMPT_TOKENS, output_tokens: 5, total_tokens: MOCK_PROMPT_TOKENS + 5 });
      // The gateway always asks chat upstreams for stream usage.
      expect(lastChatBody(mock)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    });

    it('works with the client stream helper (snapshots, finalResponse, output_text)', async () => {
      const stream = client.responses.stream({ model: 'compat/mock-model', input: 'Say hello' });
      let snapshot = '';
      stream.on('response.output_text.delta', (event) => (snapshot = event.snapshot));
      const final = await stream.finalResponse();
      expect(final.output_text).toBe(STREAMED_TEXT);
      expect(snapshot).toBe(STREAMED_TEXT);
    });

    it('frames events as `event:` + `data:` with no [DONE]', async () => {
      const reply = await rawRequest(`${gateway.url}/v1/responses`, {
        headers: bearer(),
        body: { model: 'compat/mock-model', input: 'hi', stream: true },
      });
      expect(reply.status).toBe(200);
      expect(String(reply.headers['content-type'])).toMatch(/^text\/event-stream/);
      const frames = reply.text.split('\n\n').filter((frame) => frame !== '');
      for (const frame of frames) expect(frame).toMatch(/^event: response\.[a-z_.]+\ndata: \{/);
      expect(reply.text).not.toContain('[DONE]');
    });

    it('turns tool calls into function_call items, JSON and streamed', async () => {
      const response = await client.responses.create({
        model: 'compat/mock-model',
        input: 'Weather in Paris?',
        tools: [weatherTool],
        tool_choice: 'auto',
      });
      expect(response.output).toEqual([
        expect.objectContaining({ type: 'function_call', status: 'completed', name: 'get_weather', arguments: MOCK_WEATHER_ARGUMENTS }),
      ]);
      expect((response.output[0] as { call_id?: string }).call_id).toMatch(/^call_mock_/);
      expect(lastChatBody(mock)['tools']).toEqual([
        {
          type: 'function',
          function: { name: 'get_weather', description: weatherTool.description, parameters: weatherTool.parameters, strict: true },
        },
      ]);

      const events = await collect(
        await client.responses.create({ model: 'compat/mock-model', input: 'Weather?', tools: [weatherTool], stream: true }),
      );
      const done = events.find((event) => event.type === 'response.function_call_arguments.done');
      expect(done).toMatchObject({ arguments: MOCK_WEATHER_ARGUMENTS, name: 'get_weather' });
      expect(completedOf(events).output).toEqual([expect.objectContaining({ type: 'function_call', arguments: MOCK_WEATHER_ARGUMENTS })]);
    });

    it('sends a function_call_output back as a tool message', async () => {
      await client.responses.create({
        model: 'compat/mock-model',
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: MOCK_WEATHER_ARGUMENTS },
          { type: 'function_call_output', call_id: 'call_1', output: '{"temperature":21}' },
        ],
      });
      expect(lastChatBody(mock)['messages']).toEqual([
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: MOCK_WEATHER_ARGUMENTS } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":21}' },
      ]);
    });

    it('records the usage of a translated stream', async () => {
      const { data: stream, response } = await client.responses
        .create({ model: 'compat/mock-model', input: 'hi', stream: true }, { headers: { 'X-User-Path': '/resp/translated' } })
        .withResponse();
      await collect(stream);
      const record = await usageRecordOf(storage, response.headers.get('x-request-id') ?? '');
      expect(record).toMatchObject({
        endpoint: '/v1/responses',
        provider: 'compat',
        model: 'mock-model',
        userPath: '/resp/translated',
        promptTokens: MOCK_PROMPT_TOKENS,
        completionTokens: 5,
        status: 200,
        stream: true,
      });
    });

    it('refuses features chat cannot honour, naming the field', async () => {
      const reply = await rawRequest(`${gateway.url}/v1/responses`, {
        headers: bearer(),
        body: { model: 'compat/mock-model', input: 'hi', tools: [{ type: 'web_search' }] },
      });
      const error = expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: 'tools' });
      expect(error.message).toContain('compat');
      expect(chatRequests(mock)).toHaveLength(0);
    });
  });

  it('serves an openai-type instance without a /responses route through chat, and remembers it', async () => {
    const first = await client.responses.create({ model: 'proxy/proxied-model', input: 'hi' });
    expect(first.output_text).toBe(MOCK_CONTENT);
    expect(postsTo(proxy, '/v1/responses')).toHaveLength(1);
    expect(postsTo(proxy, '/v1/chat/completions')).toHaveLength(1);
    const second = await client.responses.create({ model: 'proxy/proxied-model', input: 'hi', stream: true });
    expect(deltasOf(await collect(second))).toBe(STREAMED_TEXT);
    expect(postsTo(proxy, '/v1/responses')).toHaveLength(1);
    expect(postsTo(proxy, '/v1/chat/completions')).toHaveLength(2);
  });

  it('answers 429 from a user-path rule before any upstream call', async () => {
    const options = { headers: { 'X-User-Path': '/resp/limited' } };
    await client.responses.create({ model: 'compat/mock-model', input: 'first' }, options);
    const thrown = await rejectionOf(client.responses.create({ model: 'compat/mock-model', input: 'second' }, options));
    const error = expectClientError(thrown, { status: 429, type: 'rate_limit_error', provider: 'ratelimit', code: 'rate_limit_exceeded' });
    expect(error.message).toBe('rate limit exceeded for /resp/limited: minute request limit of 1 reached');
    expect(chatRequests(mock)).toHaveLength(1);
  });

  it('validates the request before routing it', async () => {
    const missingInput = await rawRequest(`${gateway.url}/v1/responses`, { headers: bearer(), body: { model: 'openai/mock-model' } });
    expectEnvelope(missingInput, { status: 400, type: 'invalid_request_error', code: 'missing_field', param: 'input' });
    const badInput = await rawRequest(`${gateway.url}/v1/responses`, {
      headers: bearer(),
      body: { model: 'compat/mock-model', input: 42 },
    });
    expectEnvelope(badInput, { status: 400, type: 'invalid_request_error', code: 'invalid_body', param: 'input' });
    const unknown = await rawRequest(`${gateway.url}/v1/responses`, { headers: bearer(), body: { model: 'nope/nothing', input: 'hi' } });
    expectEnvelope(unknown, { status: 404, type: 'not_found_error', code: 'model_not_found' });
    expect(mock.requests).toHaveLength(0);
  });

  it('maps upstream errors of both paths to the envelope', async () => {
    mock.setBehavior('mock-model', {
      kind: 'error',
      status: 400,
      body: { error: { message: 'bad thing', type: 'invalid_request_error' } },
    });
    const translated = await rawRequest(`${gateway.url}/v1/responses`, {
      headers: bearer(),
      body: { model: 'compat/mock-model', input: 'hi' },
    });
    const error = expectEnvelope(translated, { status: 400, type: 'invalid_request_error', provider: 'compat', code: 'upstream_error' });
    expect(error.message).toBe('bad thing');
    const streamed = await rawRequest(`${gateway.url}/v1/responses`, {
      headers: bearer(),
      body: { model: 'compat/mock-model', input: 'hi', stream: true },
    });
    expectEnvelope(streamed, { status: 400, type: 'invalid_request_error', provider: 'compat', code: 'upstream_error' });
  });

  it('maps a native upstream error without falling back to chat', async () => {
    const thrown = await rejectionOf(client.responses.create({ model: 'openai/error-429', input: 'hi' }));
    const error = expectClientError(thrown, { status: 429, type: 'rate_limit_error', provider: 'openai' });
    expect(error.message).toBe('mock upstream responses error 429');
    expect(chatRequests(mock)).toHaveLength(0);
  });

  it('retrieving an unknown response id is a 404', async () => {
    const thrown = await rejectionOf(client.responses.retrieve('resp_123'));
    expectClientError(thrown, { status: 404, type: 'not_found_error', code: 'response_not_found' });
  });
});
