import OpenAI from 'openai';
import type { ResponseInputItem, Tool } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { bearer } from '../support/http.ts';
import {
  AGENT_ARGUMENTS,
  AGENT_FINAL,
  AGENT_PLAIN,
  AGENT_PREAMBLE,
  agentChatHandler,
  agentMessagesHandler,
} from '../support/mock-agent.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { collect } from '../support/streams.ts';
import { lastUpstreamBody, sendJson } from '../support/upstream.ts';

// Responses API state on providers served through the chat translation (issue 14 item 1):
// stored responses, previous_response_id, item_reference, retrieve / input_items / delete,
// on an OpenAI-chat-wire upstream and on an Anthropic-wire upstream.

const weatherTool: Tool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

let chatMock: MockUpstream;
let nativeMock: MockUpstream;
let anthropicMock: MockAnthropic;
let gateway: GatewayProcess;
let client: OpenAI;

beforeAll(async () => {
  chatMock = await startMockUpstream();
  chatMock.route('POST', '/chat/completions', agentChatHandler);
  anthropicMock = await startMockAnthropic({ apiKey: 'sk-ant' });
  anthropicMock.route('POST', '/messages', agentMessagesHandler);
  nativeMock = await startMockUpstream();
  routeNativeResponses(nativeMock);
  const configYaml = [
    'providers:',
    `  native: { type: openai, api_key: sk-native, base_url: "${nativeMock.url}", models: [gpt-native] }`,
    `  chatwire: { type: openai-compatible, api_key: sk-chat, base_url: "${chatMock.url}", models: [agent-model] }`,
    `  claude: { type: anthropic, api_key: sk-ant, base_url: "${anthropicMock.url}", models: [claude-agent] }`,
    '',
  ].join('\n');
  gateway = await startGateway({ env: { MASTER_KEY }, configYaml, startTimeoutMs: 60_000 });
  client = openAIClient(gateway);
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  await chatMock?.close();
  await anthropicMock?.close();
  await nativeMock?.close();
});

/** A native Responses API: creates `resp_native_<n>`, and answers GET/DELETE of any id. */
function routeNativeResponses(mock: MockUpstream): void {
  let counter = 0;
  mock.route('POST', '/chat/completions', agentChatHandler);
  mock.route('POST', '/responses', (request, response) => {
    counter += 1;
    const body = request.body as Record<string, unknown>;
    const previous = body['previous_response_id'];
    if (typeof previous === 'string' && !previous.startsWith('resp_native_')) {
      const error = { message: `Previous response with id '${previous}' not found.`, type: 'invalid_request_error' };
      return sendJson(response, 404, { error: { ...error, param: 'previous_response_id', code: 'previous_response_not_found' } });
    }
    const created = { id: `resp_native_${counter}`, object: 'response', status: 'completed', store: body['store'] !== false, output: [] };
    if (body['stream'] !== true) return sendJson(response, 200, created);
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const event = (type: string, index: number): string =>
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: index, response: created })}\n\n`;
    response.end(event('response.created', 0) + event('response.completed', 1));
  });
  mock.route('GET', '/responses/*', (request, response) => {
    const [id, rest] = request.path.split('/').slice(2);
    sendJson(
      response,
      200,
      rest === 'input_items' ? { object: 'list', data: [], has_more: false } : { id, object: 'response', from: 'native', output: [] },
    );
  });
  mock.route('DELETE', '/responses/*', (request, response) => {
    sendJson(response, 200, { id: request.path.split('/')[2], object: 'response', deleted: true });
  });
}

/** `store` is in the Response object OpenAI returns, though the SDK's type leaves it out. */
const storeOf = (response: object): unknown => (response as { store?: unknown }).store;

describe.each([
  { wire: 'OpenAI chat', model: 'chatwire/agent-model', requests: () => chatMock.requests },
  { wire: 'Anthropic', model: 'claude/claude-agent', requests: () => anthropicMock.requests },
])('stored responses through the $wire wire', ({ model, requests }) => {
  it('stores a response: retrieve, input_items and delete work, then the id is a 404 naming it', async () => {
    const created = await client.responses.create({ model, input: 'Say hello', metadata: { run: 'one' } });
    expect(storeOf(created)).toBe(true);
    expect(created.output_text).toBe(AGENT_PLAIN);
    const retrieved = await client.responses.retrieve(created.id);
    expect(retrieved.id).toBe(created.id);
    expect(storeOf(retrieved)).toBe(true);
    expect(retrieved.output).toEqual(created.output);
    expect(retrieved.metadata).toEqual({ run: 'one' });

    const items = await client.responses.inputItems.list(created.id);
    expect(items.data).toEqual([
      {
        id: expect.stringMatching(/^msg_/) as unknown,
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: 'Say hello' }],
      },
    ]);

    const deleted = await fetch(`${gateway.url}/v1/responses/${created.id}`, { method: 'DELETE', headers: bearer() });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ id: created.id, object: 'response', deleted: true });
    const thrown = await rejectionOf(client.responses.retrieve(created.id));
    const error = expectClientError(thrown, { status: 404, type: 'not_found_error', code: 'response_not_found' });
    expect(error.message).toContain(created.id);
    expectClientError(await rejectionOf(client.responses.delete(created.id)), { status: 404, type: 'not_found_error' });
  });

  it('continues a stored response with previous_response_id: the upstream sees the whole conversation', async () => {
    const first = await client.responses.create({ model, input: 'My name is Ada.' });
    const second = await client.responses.create({ model, input: 'What is my name?', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    const upstream = lastUpstreamBody(requests());
    expect(upstream).toContain('My name is Ada.');
    expect(upstream).toContain(AGENT_PLAIN);
    expect(upstream.indexOf('My name is Ada.')).toBeLessThan(upstream.indexOf('What is my name?'));
    const third = await client.responses.create({ model, input: 'And again?', previous_response_id: second.id });
    expect((await client.responses.retrieve(third.id)).previous_response_id).toBe(second.id);
    expect(lastUpstreamBody(requests())).toContain('My name is Ada.');
  });

  it('resolves item_reference items to the stored output items (text written before a tool call)', async () => {
    const question: ResponseInputItem = { role: 'user', content: 'Weather in Paris?' };
    const step1 = await client.responses.create({ model, input: [question], tools: [weatherTool] });
    expect(step1.output.map((item) => item.type)).toEqual(['message', 'function_call']);
    const [message, call] = step1.output;
    if (call?.type !== 'function_call' || message === undefined) throw new Error('expected text then a function call');
    expect(call.arguments).toBe(AGENT_ARGUMENTS);
    const step2 = await client.responses.create({
      model,
      tools: [weatherTool],
      input: [
        question,
        { type: 'item_reference', id: message.id } as ResponseInputItem,
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
      ],
    });
    expect(step2.output_text).toBe(AGENT_FINAL);
    const upstream = lastUpstreamBody(requests());
    expect(upstream).toContain(AGENT_PREAMBLE);
    expect(upstream).toContain(call.call_id);
    // The stored input has the reference resolved.
    const items = await client.responses.inputItems.list(step2.id, { order: 'asc' });
    expect(items.data[1]).toMatchObject({ id: message.id, type: 'message', role: 'assistant' });
    const page = await fetch(`${gateway.url}/v1/responses/${step2.id}/input_items?order=asc&limit=2`, { headers: bearer() });
    const body = (await page.json()) as { object: string; data: { id: string }[]; first_id: string; last_id: string; has_more: boolean };
    expect(body).toMatchObject({ object: 'list', first_id: items.data[0]?.id, last_id: message.id, has_more: true });
    expect(body.data).toHaveLength(2);
    const rest = await client.responses.inputItems.list(step2.id, { order: 'asc', after: message.id });
    expect(rest.data.map((entry) => entry.type)).toEqual(['function_call', 'function_call_output']);
  });

  it('stores a stream before its last event: the very next request can refer to it', async () => {
    const events = await collect(await client.responses.create({ model, input: 'Weather?', tools: [weatherTool], stream: true }));
    const completed = events.at(-1);
    if (completed?.type !== 'response.completed') throw new Error(`stream ended with ${completed?.type}`);
    expect(storeOf(completed.response)).toBe(true);
    const message = completed.response.output[0];
    expect(message?.type).toBe('message');
    const next = await client.responses.create({
      model,
      input: [{ type: 'item_reference', id: message?.id ?? '' } as ResponseInputItem, { role: 'user', content: 'Thanks' }],
    });
    expect(next.status).toBe('completed');
    expect(lastUpstreamBody(requests())).toContain(AGENT_PREAMBLE);
    expect((await client.responses.retrieve(completed.response.id)).output).toEqual(completed.response.output);
  });

  it('answers 404 naming an unknown previous_response_id or item id, without calling the upstream', async () => {
    const before = requests().length;
    const previous = await rejectionOf(client.responses.create({ model, input: 'hi', previous_response_id: 'resp_unknown' }));
    const error = expectClientError(previous, { status: 404, type: 'not_found_error', param: 'previous_response_id' });
    expect(error.message).toContain('resp_unknown');
    const item = await rejectionOf(
      client.responses.create({ model, input: [{ type: 'item_reference', id: 'msg_unknown' } as ResponseInputItem] }),
    );
    expect(expectClientError(item, { status: 404, type: 'not_found_error', code: 'item_not_found' }).message).toContain('msg_unknown');
    expect(requests().length).toBe(before);
  });

  it('keeps nothing for store: false', async () => {
    const created = await client.responses.create({ model, input: 'hi', store: false });
    expect(storeOf(created)).toBe(false);
    expectClientError(await rejectionOf(client.responses.retrieve(created.id)), { status: 404, type: 'not_found_error' });
    const reference = created.output[0]?.id ?? '';
    const thrown = await rejectionOf(
      client.responses.create({ model, input: [{ type: 'item_reference', id: reference } as ResponseInputItem] }),
    );
    expectClientError(thrown, { status: 404, type: 'not_found_error', code: 'item_not_found' });
  });
});

const asUserPath = (path: string): OpenAI =>
  new OpenAI({
    baseURL: `${gateway.url}/v1`,
    apiKey: MASTER_KEY,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'X-User-Path': path },
  });

describe('stored responses and user paths', () => {
  const asPath = asUserPath;

  it('are visible to their user path and its ancestors only', async () => {
    const created = await asPath('/team/a').responses.create({ model: 'chatwire/agent-model', input: 'secret' });
    expect((await asPath('/team/a').responses.retrieve(created.id)).id).toBe(created.id);
    expect((await asPath('/team').responses.retrieve(created.id)).id).toBe(created.id);
    expect((await client.responses.retrieve(created.id)).id).toBe(created.id);
    const other = await rejectionOf(asPath('/team/b').responses.retrieve(created.id));
    expectClientError(other, { status: 404, type: 'not_found_error', code: 'response_not_found' });
    const continued = await rejectionOf(
      asPath('/team/b').responses.create({ model: 'chatwire/agent-model', input: 'hi', previous_response_id: created.id }),
    );
    expectClientError(continued, { status: 404, type: 'not_found_error', param: 'previous_response_id' });
    const deleted = await fetch(`${gateway.url}/v1/responses/${created.id}`, {
      method: 'DELETE',
      headers: { ...bearer(), 'x-user-path': '/team/b' },
    });
    expect(deleted.status).toBe(404);
    expect((await asPath('/team/a').responses.retrieve(created.id)).id).toBe(created.id);
  });
});

describe('responses of a native openai instance', () => {
  const nativeCalls = (method: string): string[] =>
    nativeMock.requests.filter((recorded) => recorded.method === method && recorded.path.includes('/responses/')).map((r) => r.path);

  it('are retrieved, listed and deleted through the instance that created them', async () => {
    const created = await client.responses.create({ model: 'native/gpt-native', input: 'hi' });
    expect(created.id).toMatch(/^resp_native_/);
    expect(await client.responses.retrieve(created.id)).toMatchObject({ id: created.id, from: 'native' });
    expect((await client.responses.inputItems.list(created.id, { limit: 5 })).data).toEqual([]);
    expect(nativeCalls('GET')).toEqual([`/v1/responses/${created.id}`, `/v1/responses/${created.id}/input_items`]);
    const deleted = await fetch(`${gateway.url}/v1/responses/${created.id}`, { method: 'DELETE', headers: bearer() });
    expect(await deleted.json()).toEqual({ id: created.id, object: 'response', deleted: true });
    expect(nativeCalls('DELETE')).toEqual([`/v1/responses/${created.id}`]);
    // Forgotten once deleted: the gateway answers without asking the instance.
    expectClientError(await rejectionOf(client.responses.retrieve(created.id)), { status: 404, type: 'not_found_error' });
    expect(nativeCalls('GET')).toHaveLength(2);
  });

  it('are found after a stream too, for their user path only, and not when store is false', async () => {
    const events = await collect(await client.responses.create({ model: 'native/gpt-native', input: 'hi', stream: true }));
    const completed = events.at(-1);
    if (completed?.type !== 'response.completed') throw new Error('expected response.completed');
    expect(await client.responses.retrieve(completed.response.id)).toMatchObject({ from: 'native' });
    const created = await asUserPath('/x').responses.create({ model: 'native/gpt-native', input: 'hi' });
    expectClientError(await rejectionOf(asUserPath('/y').responses.retrieve(created.id)), { status: 404, type: 'not_found_error' });
    const unstored = await client.responses.create({ model: 'native/gpt-native', input: 'hi', store: false });
    expectClientError(await rejectionOf(client.responses.retrieve(unstored.id)), { status: 404, type: 'not_found_error' });
  });

  it('continue a conversation the gateway stored, through chat for that request only', async () => {
    const first = await client.responses.create({ model: 'chatwire/agent-model', input: 'My name is Ada.' });
    nativeMock.reset();
    const second = await client.responses.create({ model: 'native/gpt-native', input: 'Name?', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toBe(AGENT_PLAIN);
    const posts = nativeMock.requests.filter((recorded) => recorded.method === 'POST').map((recorded) => recorded.path);
    expect(posts).toEqual(['/v1/responses', '/v1/chat/completions']);
    expect(JSON.stringify(nativeMock.requests.at(-1)?.body)).toContain('My name is Ada.');
    // The instance stays native, and an id nobody holds is its own 404.
    expect((await client.responses.create({ model: 'native/gpt-native', input: 'hi' })).id).toMatch(/^resp_native_/);
    const unknown = await rejectionOf(
      client.responses.create({ model: 'native/gpt-native', input: 'hi', previous_response_id: 'resp_gone' }),
    );
    expectClientError(unknown, { status: 404, type: 'not_found_error', provider: 'native', param: 'previous_response_id' });
  });
});

describe('stored responses on PostgreSQL storage', () => {
  let database: GatewayDatabase;
  let pgGateway: GatewayProcess;

  beforeAll(async () => {
    database = await createGatewayDatabase('postgresql');
    const configYaml = `providers:\n  chatwire: { type: openai-compatible, api_key: sk-chat, base_url: "${chatMock.url}", models: [agent-model] }\n`;
    pgGateway = await startGateway({ env: { MASTER_KEY, ...database.env }, configYaml, startTimeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await pgGateway?.stop();
    await database?.dispose();
  });

  it('continues, references, retrieves and deletes like on SQLite', async () => {
    const pgClient = openAIClient(pgGateway);
    const model = 'chatwire/agent-model';
    const events = await collect(await pgClient.responses.create({ model, input: 'Weather?', tools: [weatherTool], stream: true }));
    const completed = events.at(-1);
    if (completed?.type !== 'response.completed') throw new Error('expected response.completed');
    const message = completed.response.output[0];
    const next = await pgClient.responses.create({
      model,
      previous_response_id: completed.response.id,
      input: [{ type: 'item_reference', id: message?.id ?? '' } as ResponseInputItem, { role: 'user', content: 'Thanks' }],
    });
    expect(next.previous_response_id).toBe(completed.response.id);
    expect((await pgClient.responses.inputItems.list(next.id)).data).toHaveLength(2);
    await pgClient.responses.delete(next.id);
    expectClientError(await rejectionOf(pgClient.responses.retrieve(next.id)), { status: 404, type: 'not_found_error' });
    expect((await pgClient.responses.retrieve(completed.response.id)).id).toBe(completed.response.id);
  });
});
