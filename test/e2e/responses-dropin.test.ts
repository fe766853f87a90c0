import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, callJson, parseJson, type RawReply } from '../support/http.ts';
import { type MockRequest, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { sendJson } from '../support/upstream.ts';

// Issue 30, the Responses items: the SDK's beta signals reach a native upstream, a stored
// prompt without a model is routed to the `provider` hint or the default OpenAI-type instance,
// and a response created through `/p/{instance}` is read back through `/v1` by its owner only.

interface Seen {
  method: string;
  path: string;
  query: string;
  headers: MockRequest['headers'];
  body: Record<string, unknown>;
}

/** A Responses API of one account that knows nothing of tenants; it records what it was sent. */
function serveResponses(mock: MockUpstream): Seen[] {
  const seen: Seen[] = [];
  const stored = new Map<string, Record<string, unknown>>();
  let counter = 0;
  const note = (request: MockRequest): Record<string, unknown> => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    seen.push({ method: request.method, path: request.path, query: request.query, headers: request.headers, body });
    return body;
  };
  mock.route('POST', '/responses', (request, response) => {
    const body = note(request);
    counter += 1;
    const output = [{ id: `msg_${counter}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] }];
    const model = typeof body['model'] === 'string' ? body['model'] : 'gpt-4o-mini-from-prompt';
    const created = {
      id: `resp_${counter}`,
      object: 'response',
      status: 'completed',
      model,
      output,
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
    };
    stored.set(created.id, created);
    if (body['stream'] !== true) return sendJson(response, 200, created);
    const events = [
      { type: 'response.created', response: { ...created, status: 'in_progress', output: [], usage: null } },
      { type: 'response.completed', response: created },
    ];
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(
      events.map((event, index) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`).join(''),
    );
  });
  for (const method of ['GET', 'DELETE'] as const) {
    mock.route(method, '/responses/*', (request, response) => {
      note(request);
      const found = stored.get(request.path.split('/')[2] ?? '');
      if (found === undefined) return sendJson(response, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
      if (request.path.endsWith('/input_items')) return sendJson(response, 200, { object: 'list', data: [], has_more: false });
      sendJson(response, 200, method === 'DELETE' ? { id: found['id'], object: 'response', deleted: true } : found);
    });
  }
  // Conversations and vector stores, for the catalogue routes the passthrough records (one account for every key).
  const objects = new Map<string, Record<string, unknown>>();
  for (const collection of ['conversations', 'vector_stores']) {
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      mock.route(method, `/${collection}*`, (request, response) => {
        const body = note(request);
        const path = request.path.replace(/^\//, '');
        if (method === 'POST' && path === collection) {
          counter += 1;
          const created = { id: `${collection === 'conversations' ? 'conv' : 'vs'}_${counter}`, object: collection, ...body };
          objects.set(`${collection}/${created.id}`, created);
          return sendJson(response, 200, created);
        }
        if (method === 'GET' && path === collection) return sendJson(response, 200, { object: 'list', data: [...objects.values()] });
        const found = objects.get(path);
        if (found === undefined) return sendJson(response, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
        if (method === 'DELETE') objects.delete(path);
        sendJson(response, 200, method === 'DELETE' ? { id: found['id'], deleted: true } : found);
      });
    }
  }
  return seen;
}

describe('/v1/responses drop-in details', () => {
  let mock: MockUpstream;
  let seen: Seen[];
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  const tokens = { a: '', b: '' };

  const post = (token: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<RawReply> =>
    call(gateway, path, { token, body, headers });
  const get = (token: string, path: string, headers: Record<string, string> = {}): Promise<RawReply> =>
    call(gateway, path, { token, headers });
  const idOf = (reply: RawReply): string => {
    expect(reply.status, reply.text).toBe(200);
    return String(parseJson(reply.text)['id']);
  };
  const lastSeen = (): Seen => seen.at(-1) as Seen;

  beforeAll(async () => {
    mock = await startMockUpstream();
    seen = serveResponses(mock);
    database = await createGatewayDatabase('sqlite');
    const configYaml = `
providers:
  compat: { type: openai-compatible, api_key: sk-compat, base_url: "${mock.url}", models: [gpt-4o-mini] }
  openai: { type: openai, api_key: sk-one, base_url: "${mock.url}", models: [gpt-4o-mini] }
  second: { type: openai, api_key: sk-two, base_url: "${mock.url}", models: [gpt-4o-mini] }
usage:
  flush_interval_ms: 20
`;
    gateway = await startGateway({ env: { MASTER_KEY: 'test-master-key', ...database.env }, configYaml, startTimeoutMs: 60_000 });
    const key = async (body: Record<string, unknown>) => callJson(gateway, '/admin/api-keys', 201, { body });
    tokens.a = String((await key({ name: 'a', user_path: '/team/a' }))['key']);
    tokens.b = String((await key({ name: 'b', user_path: '/team/b' }))['key']);
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await database?.dispose();
    await mock?.close();
  });

  it('forwards the openai-beta header and ?beta=true on create and retrieve, and nothing else of the client', async () => {
    const beta = { 'openai-beta': 'responses=v1', 'x-not-forwarded': 'secret' };
    const id = idOf(await post(tokens.a, '/v1/responses?beta=true', { model: 'openai/gpt-4o-mini', input: 'hi' }, beta));
    const created = lastSeen();
    expect(created.query).toBe('beta=true');
    expect(created.headers['openai-beta']).toBe('responses=v1');
    expect(created.headers['x-not-forwarded']).toBeUndefined();
    expect(created.body['model']).toBe('gpt-4o-mini');
    expect((await get(tokens.a, `/v1/responses/${id}?beta=true`, beta)).status).toBe(200);
    const retrieved = lastSeen();
    expect(retrieved).toMatchObject({ method: 'GET', path: `/responses/${id}`, query: 'beta=true' });
    expect(retrieved.headers['openai-beta']).toBe('responses=v1');
    expect(retrieved.headers['x-not-forwarded']).toBeUndefined();
    // Without the signals, none is invented.
    idOf(await post(tokens.a, '/v1/responses', { model: 'openai/gpt-4o-mini', input: 'hi' }));
    expect(lastSeen().query).toBe('');
    expect(lastSeen().headers['openai-beta']).toBeUndefined();
  });

  it('routes a stored prompt without a model to the provider hint or the first OpenAI-type instance, owned by its creator', async () => {
    const prompt = { id: 'pmpt_123', variables: { city: 'Paris' } };
    const byDefault = idOf(await post(tokens.a, '/v1/responses', { prompt }));
    expect(lastSeen().headers.authorization).toBe('Bearer sk-one');
    expect(lastSeen().body).toEqual({ prompt });
    const hinted = idOf(await post(tokens.a, '/v1/responses', { prompt, provider: 'second' }));
    expect(lastSeen().headers.authorization).toBe('Bearer sk-two');
    expect(lastSeen().body).toEqual({ prompt });
    for (const id of [byDefault, hinted]) {
      expect((await get(tokens.a, `/v1/responses/${id}`)).status).toBe(200);
      const unknown = await get(tokens.b, '/v1/responses/resp_nope');
      const foreign = await get(tokens.b, `/v1/responses/${id}`);
      expectEnvelope(foreign, { status: 404, type: 'not_found_error', code: 'response_not_found' });
      expect(foreign.text.replaceAll(id, '<id>')).toBe(unknown.text.replaceAll('resp_nope', '<id>'));
    }
    // A hint naming an instance without the Responses API: the 400 of a request without a model, nothing sent.
    const calls = seen.length;
    expectEnvelope(await post(tokens.a, '/v1/responses', { prompt, provider: 'compat' }), {
      status: 400,
      type: 'invalid_request_error',
      code: 'missing_field',
      param: 'model',
    });
    expect(seen.length).toBe(calls);
    // Any other request without a model (the API allows it: the SDK's own `responses.create({})`) goes to the
    // default instance as it is; the upstream decides what else it needs.
    for (const body of [{ input: 'hi' }, {}]) {
      idOf(await post(tokens.a, '/v1/responses', body));
      expect(lastSeen().body).toEqual(body);
    }
    expect(seen.length).toBe(calls + 2);
  });

  it('a response created through /p/{instance} is read back through /v1 by its owner, 404 for another tenant', async () => {
    const json = idOf(await post(tokens.a, '/p/openai/v1/responses', { model: 'gpt-4o-mini', input: 'hi' }));
    const streamed = await post(tokens.a, '/p/second/v1/responses', { model: 'gpt-4o-mini', input: 'hi', stream: true });
    expect(streamed.status, streamed.text).toBe(200);
    const streamedId = /"id":"(resp_\d+)"/.exec(streamed.text)?.[1] ?? '';
    for (const [id, key] of [
      [json, 'Bearer sk-one'],
      [streamedId, 'Bearer sk-two'],
    ] as const) {
      const read = await get(tokens.a, `/v1/responses/${id}`);
      expect(read.status, read.text).toBe(200);
      expect(parseJson(read.text)['id']).toBe(id);
      expect(lastSeen().headers.authorization).toBe(key);
      expect((await get(tokens.a, `/v1/responses/${id}/input_items`)).status).toBe(200);
      expect((await get(tokens.a, `/p/${key === 'Bearer sk-one' ? 'openai' : 'second'}/v1/responses/${id}`)).status).toBe(200);
      const calls = seen.length;
      for (const suffix of ['', '/input_items']) {
        const unknown = await get(tokens.b, `/v1/responses/resp_nope${suffix}`);
        const foreign = await get(tokens.b, `/v1/responses/${id}${suffix}`);
        expectEnvelope(foreign, { status: 404, type: 'not_found_error', code: 'response_not_found' });
        expect(foreign.text.replaceAll(id, '<id>')).toBe(unknown.text.replaceAll('resp_nope', '<id>'));
      }
      expectEnvelope(await call(gateway, `/v1/responses/${id}`, { token: tokens.b, method: 'DELETE' }), {
        status: 404,
        type: 'not_found_error',
        code: 'response_not_found',
      });
      expect(seen.length).toBe(calls);
      expect((await call(gateway, `/v1/responses/${id}`, { token: tokens.a, method: 'DELETE' })).status).toBe(200);
      expect(lastSeen()).toMatchObject({ method: 'DELETE', path: `/responses/${id}` });
    }
  });
  it('a catalogue resource created through /p/{instance} is owned: /v1 reads it back on that instance, another tenant gets 404', async () => {
    // A tenant's conversation through the passthrough of the second instance.
    const conversation = idOf(await post(tokens.a, '/p/second/v1/conversations', { metadata: { via: 'p' } }));
    expect(lastSeen().headers.authorization).toBe('Bearer sk-two');
    const read = await get(tokens.a, `/v1/conversations/${conversation}`);
    expect(read.status, read.text).toBe(200);
    expect(lastSeen()).toMatchObject({ method: 'GET', path: `/conversations/${conversation}` });
    expect(lastSeen().headers.authorization).toBe('Bearer sk-two');
    const calls = seen.length;
    for (const path of [`/v1/conversations/${conversation}`, `/p/second/v1/conversations/${conversation}`]) {
      const unknown = await get(tokens.b, path.replace(conversation, 'conv_nope'));
      const foreign = await get(tokens.b, path);
      expectEnvelope(foreign, { status: 404, type: 'not_found_error', code: 'conversation_not_found' });
      expect(foreign.text.replaceAll(conversation, '<id>')).toBe(unknown.text.replaceAll('conv_nope', '<id>'));
    }
    expectEnvelope(await call(gateway, `/p/second/v1/conversations/${conversation}`, { token: tokens.b, method: 'DELETE' }), {
      status: 404,
      type: 'not_found_error',
      code: 'conversation_not_found',
    });
    // A tenant lists through /v1 (from the owner store), not through the passthrough.
    expectEnvelope(await get(tokens.b, '/p/second/v1/vector_stores'), {
      status: 403,
      type: 'permission_error',
      code: 'endpoint_not_allowed',
    });
    expect(seen.length).toBe(calls);
    // Deleted through the passthrough: forgotten, so /v1 answers it as unknown without asking the upstream.
    expect((await call(gateway, `/p/second/v1/conversations/${conversation}`, { token: tokens.a, method: 'DELETE' })).status).toBe(200);
    expectEnvelope(await get(tokens.a, `/v1/conversations/${conversation}`), {
      status: 404,
      type: 'not_found_error',
      code: 'conversation_not_found',
    });
    expect(seen.length).toBe(calls + 1);
    // What an admin creates through /p is recorded with its instance: /v1 without a hint reaches it there.
    const store = idOf(await call(gateway, '/p/second/v1/vector_stores', { body: { name: 'ops' } }));
    const admin = await call(gateway, `/v1/vector_stores/${store}`);
    expect(admin.status, admin.text).toBe(200);
    expect(lastSeen().headers.authorization).toBe('Bearer sk-two');
    expectEnvelope(await get(tokens.a, `/v1/vector_stores/${store}`), {
      status: 404,
      type: 'not_found_error',
      code: 'vector_store_not_found',
    });
    // A child path is its parent's route: the vector store is checked, not only the file it names.
    const child = await get(tokens.a, `/p/second/v1/vector_stores/${store}/files/file-x`);
    expectEnvelope(child, { status: 404, type: 'not_found_error', code: 'vector_store_not_found' });
  });
});
