import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import type OpenAI from 'openai';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { openAIClient } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, chatBody, listModels, parseJson, rawRequest } from '../support/http.ts';
import { MOCK_ANTHROPIC_CONTENT } from '../support/mock-anthropic-wire.ts';
import { createServiceAccount, type ServiceAccount } from '../support/mock-google-oauth.ts';
import { MOCK_CONTENT, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { MOCK_GEMINI_TEXT, type MockVertex, startMockVertex, type VertexCall } from '../support/mock-vertex.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { collect } from '../support/streams.ts';
import { eventually } from '../support/wait.ts';

// The vertex provider end to end: the gateway gets OAuth tokens for test-made service accounts
// from a mock token endpoint (`token_uri`), and calls a mock Vertex AI that checks them, the
// URLs (project, location, publisher, method) and the bodies: Gemini and Claude models on
// chat completions, /v1/messages natively for Claude, embeddings, errors and failover.

const GEMINI = 'gemini-2.5-flash';
const CLAUDE = 'claude-sonnet-4-5@20250929';
const MODELS = [GEMINI, CLAUDE, 'text-embedding-005', 'error-429', 'error-500', 'error-401', 'stream-break'];
const SHORT_LIVED_SECONDS = 306;

const weatherTool: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};

function configYaml(
  mock: MockVertex,
  openai: MockUpstream,
  files: { main: string; short: ServiceAccount; bad: ServiceAccount; down: ServiceAccount },
): string {
  const inline = (account: ServiceAccount): string => `'${JSON.stringify(account.json)}'`;
  return `
providers:
  vertex:
    type: vertex
    project: test-project
    location: us-east5
    credentials: ${files.main}
    base_url: ${mock.url}
    models: [${MODELS.join(', ')}]
  vshort:
    type: vertex
    location: global
    credentials_json: ${inline(files.short)}
    base_url: ${mock.url}
    models: [${GEMINI}]
  vdown:
    type: vertex
    project: test-project
    credentials_json: ${inline(files.down)}
    base_url: ${mock.url}
    models: [${GEMINI}]
  vbad:
    type: vertex
    project: test-project
    credentials_json: ${inline(files.bad)}
    base_url: ${mock.url}
    models: [${GEMINI}]
  openai:
    type: openai
    api_key: ${UPSTREAM_KEY}
    base_url: ${openai.url}
    models: [mock-model]
virtual_models:
  - name: vx-fallback
    strategy: failover
    targets:
      - { provider: vertex, model: error-429 }
      - { provider: openai, model: mock-model }
  - name: vx-fallback-500
    strategy: failover
    targets:
      - { provider: vertex, model: error-500 }
      - { provider: openai, model: mock-model }
`;
}

describe('vertex provider', () => {
  let mock: MockVertex;
  let openaiMock: MockUpstream;
  let gateway: GatewayProcess;
  let database: GatewayDatabase;
  let storage: Storage;
  let client: OpenAI;
  let directory: string;
  let main: ServiceAccount;

  const lastCall = (): VertexCall => {
    const call = mock.calls.at(-1);
    expect(call, 'the mock Vertex received no call').toBeDefined();
    return call as VertexCall;
  };
  const tokensOf = (account: ServiceAccount): string[] =>
    mock.issued.filter((issued) => issued.clientEmail === account.json['client_email']).map((issued) => issued.token);

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'vertex-e2e-'));
    // The accounts need the mock's token_uri: start it first, then hand it the accounts.
    const accounts: ServiceAccount[] = [];
    mock = await startMockVertex({ accounts, lifetimeOf: (email) => (email.startsWith('short@') ? SHORT_LIVED_SECONDS : 3600) });
    main = createServiceAccount('test-project', mock.tokenUri, 'gateway');
    const short = createServiceAccount('short-project', mock.tokenUri, 'short');
    // The same account with a key Google does not know (rotated away, forged): its signature fails.
    const bad = createServiceAccount('test-project', mock.tokenUri, 'gateway');
    accounts.push(main, short);
    // An account whose token endpoint does not answer (nothing listens on port 9 of loopback).
    const down = createServiceAccount('test-project', 'http://127.0.0.1:9/token', 'down');
    const mainFile = join(directory, 'service-account.json');
    writeFileSync(mainFile, JSON.stringify(main.json));
    openaiMock = await startMockUpstream({ apiKey: UPSTREAM_KEY, models: ['mock-model'] });
    database = await createGatewayDatabase('sqlite');
    gateway = await startGateway({
      env: { MASTER_KEY, ...database.env },
      configYaml: configYaml(mock, openaiMock, { main: mainFile, short, bad, down }),
    });
    storage = await database.open(gateway);
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await storage?.close();
    await gateway?.stop();
    await Promise.all([mock?.close(), openaiMock?.close()]);
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  it('serves a Gemini chat completion through generateContent with the service account token', async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: `vertex/${GEMINI}`,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Say hello' },
        ],
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(MOCK_GEMINI_TEXT.join(''));
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
    expect((data as unknown as { provider: string }).provider).toBe('vertex');
    const call = lastCall();
    expect(call).toMatchObject({
      publisher: 'google',
      model: GEMINI,
      method: 'generateContent',
      project: 'test-project',
      location: 'us-east5',
    });
    expect(tokensOf(main)).toContain(call.token);
    expect(call.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
    });
    const record = await usageRecordOf(storage, response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ provider: 'vertex', model: GEMINI, promptTokens: 9, completionTokens: 4 });
    expect(record.costUsd).toBeCloseTo((9 * 0.3 + 4 * 2.5) / 1e6, 12);
  });

  it('streams Gemini through streamGenerateContent?alt=sse, usage last', async () => {
    const stream = await client.chat.completions.create({
      model: `vertex/${GEMINI}`,
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = await collect(stream);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(MOCK_GEMINI_TEXT.join(''));
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 4 });
    expect(lastCall()).toMatchObject({ method: 'streamGenerateContent', query: '?alt=sse' });
  });

  it('sends tools to Gemini and returns its function call as tool_calls', async () => {
    const data = await client.chat.completions.create({
      model: `vertex/${GEMINI}`,
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [weatherTool],
    });
    expect(data.choices[0]?.finish_reason).toBe('tool_calls');
    expect(data.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    expect(lastCall().body['tools']).toEqual([{ functionDeclarations: [weatherTool.function] }]);
  });

  it('serves Claude through rawPredict and streamRawPredict with the Vertex anthropic_version', async () => {
    const data = await client.chat.completions.create({ model: `vertex/${CLAUDE}`, messages: [{ role: 'user', content: 'Say hello' }] });
    expect(data.choices[0]?.message.content).toBe(MOCK_ANTHROPIC_CONTENT);
    const call = lastCall();
    expect(call).toMatchObject({ publisher: 'anthropic', model: CLAUDE, method: 'rawPredict' });
    expect(call.body['anthropic_version']).toBe('vertex-2023-10-16');
    expect(call.body).not.toHaveProperty('model');
    const stream = await client.chat.completions.create({
      model: `vertex/${CLAUDE}`,
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
    });
    const chunks = await collect(stream);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('tok0 tok1 tok2 ');
    expect(lastCall().method).toBe('streamRawPredict');
  });

  it('takes /v1/messages natively for Claude (betas kept) and translates it for Gemini', async () => {
    const headers = { ...bearer(), 'anthropic-version': '2023-06-01', 'anthropic-beta': 'context-1m-2025-08-07' };
    const body = { model: `vertex/${CLAUDE}`, max_tokens: 64, messages: [{ role: 'user', content: 'Say hello' }] };
    const reply = await rawRequest(`${gateway.url}/v1/messages`, { headers, body });
    expect(reply.status).toBe(200);
    expect(parseJson(reply.text)).toMatchObject({
      id: 'msg_mock_1',
      type: 'message',
      content: [{ type: 'text', text: MOCK_ANTHROPIC_CONTENT }],
    });
    const call = lastCall();
    expect(call).toMatchObject({ publisher: 'anthropic', method: 'rawPredict' });
    expect(call.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
    expect(call.headers['anthropic-version']).toBeUndefined();
    const streamed = await rawRequest(`${gateway.url}/v1/messages`, { headers, body: { ...body, stream: true } });
    expect(streamed.text).toContain('event: message_stop');
    expect(lastCall().method).toBe('streamRawPredict');
    const gemini = await rawRequest(`${gateway.url}/v1/messages`, { headers, body: { ...body, model: `vertex/${GEMINI}` } });
    expect(parseJson(gemini.text)).toMatchObject({ type: 'message', content: [{ type: 'text', text: MOCK_GEMINI_TEXT.join('') }] });
    expect(lastCall().method).toBe('generateContent');
    const count = await rawRequest(`${gateway.url}/v1/messages/count_tokens`, {
      headers,
      body: { model: `vertex/${CLAUDE}`, messages: body.messages },
    });
    expect(parseJson(count.text)).toEqual({ input_tokens: 21 });
    expect(lastCall()).toMatchObject({ model: 'count-tokens', method: 'rawPredict', body: { model: CLAUDE } });
  });

  it('serves embeddings through predict', async () => {
    const data = await client.embeddings.create({
      model: 'vertex/text-embedding-005',
      input: ['first text', 'second'],
      encoding_format: 'float',
    });
    expect(data.data.map((item) => item.embedding)).toEqual([
      [0.5, -0.25, 0.125],
      [1.5, -0.25, 0.125],
    ]);
    expect(data.usage).toMatchObject({ prompt_tokens: 3 });
    expect(lastCall()).toMatchObject({ method: 'predict', body: { instances: [{ content: 'first text' }, { content: 'second' }] } });
  });

  it('maps RESOURCE_EXHAUSTED to a 429 envelope with Google message, and fails over to OpenAI', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('vertex/error-429') });
    expectEnvelope(reply, { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited', provider: 'vertex' });
    expect(parseJson(reply.text)['error']).toMatchObject({ message: expect.stringContaining('Resource exhausted') as unknown });
    const before = mock.calls.length;
    const data = await client.chat.completions.create({ model: 'vx-fallback', messages: [{ role: 'user', content: 'Say hello' }] });
    expect(data.choices[0]?.message.content).toBe(MOCK_CONTENT);
    expect((data as unknown as { provider: string }).provider).toBe('openai');
    expect(mock.calls.slice(before).map((call) => call.model)).toEqual(['error-429']);
  });

  it('fails over on a 5xx and on a 429 before a stream starts, usage charged to the instance that served', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'vx-fallback-500', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect((data as unknown as { provider: string }).provider).toBe('openai');
    expect(lastCall().model).toBe('error-500');
    // One record per executed attempt: the failed one on vertex, the served one (with tokens) on openai.
    const requestId = response.headers.get('x-request-id') ?? '';
    const records = await eventually(async () => {
      const found = await storage.usage.findByRequestId(requestId);
      return found.length >= 2 ? found : undefined;
    }, `two usage records for ${requestId}`);
    const served = records.find((record) => record.provider === 'openai');
    expect(served).toMatchObject({ model: 'mock-model', promptTokens: data.usage?.prompt_tokens });
    expect(records.find((record) => record.provider === 'vertex')).toMatchObject({ model: 'error-500', totalTokens: 0 });
    const stream = await client.chat.completions.create({
      model: 'vx-fallback',
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
    });
    const chunks = await collect(stream);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).not.toBe('');
    expect(lastCall()).toMatchObject({ model: 'error-429', method: 'streamGenerateContent' });
  });

  it('retries once with a fresh token when Vertex refuses one before its expiry', async () => {
    const revoked = tokensOf(main).at(-1) ?? '';
    mock.revoke(revoked);
    const data = await client.chat.completions.create({ model: `vertex/${GEMINI}`, messages: [{ role: 'user', content: 'Hi' }] });
    expect(data.choices[0]?.message.content).toBe(MOCK_GEMINI_TEXT.join(''));
    expect(tokensOf(main)).toHaveLength(2);
    expect(lastCall().token).toBe(tokensOf(main)[1]);
  });

  it('maps a 401 from Vertex and refused credentials to authentication_error', async () => {
    const before = mock.calls.length;
    const denied = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('vertex/error-401') });
    expectEnvelope(denied, { status: 401, type: 'authentication_error', provider: 'vertex' });
    expect(parseJson(denied.text)['error']).toMatchObject({ message: 'Request had invalid authentication credentials.' });
    // Tried again with a fresh token, then reported.
    const tokens = mock.calls.slice(before).map((call) => call.token);
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).not.toBe(tokens[1]);
    const refused = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody(`vbad/${GEMINI}`) });
    expectEnvelope(refused, { status: 401, type: 'authentication_error', provider: 'vbad' });
    expect(parseJson(refused.text)['error']).toMatchObject({ message: expect.stringContaining('Invalid JWT Signature.') as unknown });
    expect(mock.refused).toContain('Invalid JWT Signature.');
    const unreachable = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody(`vdown/${GEMINI}`) });
    expectEnvelope(unreachable, { status: 502, type: 'provider_error', code: 'upstream_unreachable', provider: 'vdown' });
  });

  it('caches the access token and refreshes it before it expires', async () => {
    const ask = (): Promise<unknown> =>
      client.chat.completions.create({ model: `vshort/${GEMINI}`, messages: [{ role: 'user', content: 'Hi' }] });
    const short = (): string[] => mock.issued.filter((issued) => issued.clientEmail.startsWith('short@')).map((issued) => issued.token);
    await ask();
    await ask();
    expect(short()).toHaveLength(1);
    const first = lastCall();
    // Global location, and the project taken from the service account's project_id.
    expect(first).toMatchObject({ project: 'short-project', location: 'global', token: short()[0] });
    // Tokens are refreshed five minutes ahead of expiry: this one is due after six seconds.
    await sleep((SHORT_LIVED_SECONDS - 300) * 1000 + 500);
    await ask();
    expect(short()).toHaveLength(2);
    expect(lastCall().token).toBe(short()[1]);
  });

  it('ends a Gemini stream cut mid-way with an error event, never [DONE]', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('vertex/stream-break', { stream: true }),
    });
    expect(reply.status).toBe(200);
    const frames = reply.text.split('\n\n').filter((frame) => frame !== '');
    expect(reply.text).toContain('"content":"Hello"');
    expect(frames.at(-1)).not.toBe('data: [DONE]');
    expect(parseJson(frames.at(-1)?.slice('data: '.length) ?? '')['error']).toMatchObject({ type: 'provider_error', provider: 'vertex' });
  });

  it('lists the configured models', async () => {
    const ids = (await listModels(gateway)).map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(MODELS.map((model) => `vertex/${model}`)));
    expect(ids).toContain('vx-fallback');
  });
});
