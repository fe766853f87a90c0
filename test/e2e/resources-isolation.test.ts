import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, callJson, type RawReply } from '../support/http.ts';
import { type MockRequest, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { sendJson } from '../support/upstream.ts';

// OpenAI's stateful resources on /v1 (the catalogue, gateway/relay/openai-resources.ts): each id
// created through the gateway is owned; another tenant cannot list, read, update or delete it
// nor its children (404 `<resource>_not_found`, the same answer as an unknown id, nothing sent
// upstream); the owner can; an admin key sees everything.

const prefixes: Record<string, string> = {
  assistants: 'asst_',
  threads: 'thread_',
  runs: 'run_',
  messages: 'msg_',
  vector_stores: 'vs_',
  conversations: 'conv_',
  items: 'item_',
  files: 'file-',
};

/**
 * A generic in-memory OpenAI resource API: POST to a collection creates `{collection}/{id}`
 * (a vector store file takes its `file_id`), POST to an object updates it, GET reads an object
 * or lists a collection, DELETE forgets it.
 */
function serveResources(mock: MockUpstream): { calls: MockRequest[] } {
  const objects = new Map<string, Record<string, unknown>>();
  const calls: MockRequest[] = [];
  let next = 0;
  const handler = (request: MockRequest, response: Parameters<typeof sendJson>[0]): void => {
    calls.push(request);
    const path = request.path.replace(/^\/(v1\/)?/, '');
    const segments = path.split('/');
    const existing = objects.get(path);
    const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
    if (request.method === 'DELETE') {
      objects.delete(path);
      return sendJson(response, existing === undefined ? 404 : 200, { id: segments.at(-1), deleted: existing !== undefined });
    }
    if (existing !== undefined) {
      if (request.method === 'POST') Object.assign(existing, body);
      return sendJson(response, 200, existing);
    }
    const collection = segments.at(-1) as string;
    if (request.method === 'GET' && prefixes[collection] === undefined) {
      return sendJson(response, 404, { error: { message: `No such object: ${path}`, type: 'invalid_request_error' } });
    }
    if (request.method === 'GET') {
      const data = [...objects.entries()].filter(([key]) => key.startsWith(`${path}/`) && !key.slice(path.length + 1).includes('/'));
      return sendJson(response, 200, { object: 'list', data: data.map(([, value]) => value), has_more: false });
    }
    next += 1;
    if (path === 'threads/runs') {
      // createAndRun: a new thread and its first run.
      const thread = `thread_${next}`;
      objects.set(`threads/${thread}`, { id: thread, object: 'thread' });
      objects.set(`threads/${thread}/runs/run_${next}`, { id: `run_${next}`, object: 'thread.run', thread_id: thread });
      return sendJson(response, 200, objects.get(`threads/${thread}/runs/run_${next}`));
    }
    const id = typeof body['file_id'] === 'string' ? body['file_id'] : `${prefixes[collection] ?? 'obj_'}${next}`;
    const created: Record<string, unknown> = { id, object: collection, ...body };
    if (collection === 'runs' && segments[0] === 'threads') created['thread_id'] = segments[1];
    objects.set(`${path}/${id}`, created);
    sendJson(response, 200, created);
  };
  for (const method of ['GET', 'POST', 'DELETE']) {
    for (const collection of ['assistants', 'threads', 'vector_stores', 'conversations', 'files']) {
      mock.route(method, `/${collection}*`, handler);
    }
  }
  return { calls };
}

describe('OpenAI resources through /v1: owned per tenant', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let upstream: ReturnType<typeof serveResources>;
  const keys: Record<'a' | 'b' | 'admin', string> = { a: '', b: '', admin: '' };

  beforeAll(async () => {
    mock = await startMockUpstream();
    upstream = serveResources(mock);
    const configYaml = `
providers:
  other:
    type: openai
    api_key: sk-other
    base_url: ${mock.url}
    models: [gpt-4o]
  openai:
    type: openai
    api_key: sk-openai
    base_url: ${mock.url}
    models: [gpt-4o-mini]
    resources_default: true
`;
    gateway = await startGateway({ env: { MASTER_KEY: 'resources-master-key' }, configYaml });
    const create = async (name: string, userPath: string, role?: string): Promise<string> => {
      const created = await callJson(gateway, '/admin/api-keys', 201, {
        token: 'resources-master-key',
        body: { name, user_path: userPath, ...(role === undefined ? {} : { role }) },
      });
      return created['key'] as string;
    };
    keys.a = await create('tenant-a', '/tenants/a');
    keys.b = await create('tenant-b', '/tenants/b');
    keys.admin = await create('ops', '/ops', 'admin');
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  const as = (tenant: keyof typeof keys, path: string, method: 'GET' | 'POST' | 'DELETE' = 'GET', body?: unknown): Promise<RawReply> =>
    call(gateway, path, { token: keys[tenant], method, ...(body === undefined ? {} : { body }) });
  const created = async (tenant: keyof typeof keys, path: string, body: unknown = {}): Promise<string> => {
    const reply = await as(tenant, path, 'POST', body);
    expect(reply.status, reply.text).toBe(200);
    return (JSON.parse(reply.text) as { id: string }).id;
  };
  /** The answer to B for A's id is the answer for an unknown id, and nothing reaches the upstream. */
  const expectHidden = async (reply: Promise<RawReply>, code: string, unknown?: Promise<RawReply>): Promise<void> => {
    const before = upstream.calls.length;
    const hidden = await reply;
    expectEnvelope(hidden, { status: 404, type: 'not_found_error', code });
    expect(upstream.calls.length).toBe(before);
    if (unknown !== undefined) {
      const other = await unknown;
      const strip = (text: string) => text.replace(/: [^"]+"/, ': ID"');
      expect(strip(other.text)).toBe(strip(hidden.text));
    }
  };
  const listedIds = async (tenant: keyof typeof keys, path: string): Promise<string[]> => {
    const reply = await as(tenant, path);
    expect(reply.status, reply.text).toBe(200);
    return (JSON.parse(reply.text) as { data: { id: string }[] }).data.map((item) => item.id);
  };

  it('assistants: B cannot list, read, update or delete A’s; A can; an admin key sees all', async () => {
    const mine = await created('a', '/v1/assistants', { model: 'gpt-4o-mini', name: 'a' });
    const theirs = await created('b', '/v1/assistants', { model: 'gpt-4o-mini', name: 'b' });
    expect(upstream.calls.at(-1)?.headers['openai-beta']).toBe('assistants=v2');
    expect(upstream.calls.at(-1)?.headers.authorization).toBe('Bearer sk-openai');
    expect(await listedIds('a', '/v1/assistants')).toEqual([mine]);
    expect(await listedIds('b', '/v1/assistants')).toEqual([theirs]);
    expect(await listedIds('admin', '/v1/assistants')).toEqual(expect.arrayContaining([mine, theirs]));
    await expectHidden(as('b', `/v1/assistants/${mine}`), 'assistant_not_found', as('b', '/v1/assistants/asst_unknown'));
    await expectHidden(as('b', `/v1/assistants/${mine}`, 'POST', { name: 'x' }), 'assistant_not_found');
    await expectHidden(as('b', `/v1/assistants/${mine}`, 'DELETE'), 'assistant_not_found');
    expect((await as('a', `/v1/assistants/${mine}`, 'POST', { name: 'renamed' })).status).toBe(200);
    expect((await as('admin', `/v1/assistants/${theirs}`)).status).toBe(200);
    expect((await as('a', `/v1/assistants/${mine}`, 'DELETE')).status).toBe(200);
    await expectHidden(as('a', `/v1/assistants/${mine}`), 'assistant_not_found');
  });

  it('threads and runs: children follow the thread’s owner; a run names only the caller’s assistant', async () => {
    const assistant = await created('a', '/v1/assistants', { model: 'gpt-4o-mini' });
    const otherAssistant = await created('b', '/v1/assistants', { model: 'gpt-4o-mini' });
    const thread = await created('a', '/v1/threads');
    const run = await created('a', `/v1/threads/${thread}/runs`, { assistant_id: assistant });
    await created('a', `/v1/threads/${thread}/messages`, { role: 'user', content: 'hi' });
    expect(await listedIds('a', `/v1/threads/${thread}/runs`)).toEqual([run]);
    expect((await as('a', `/v1/threads/${thread}/runs/${run}`)).status).toBe(200);
    await expectHidden(as('b', `/v1/threads/${thread}`), 'thread_not_found', as('b', '/v1/threads/thread_unknown'));
    await expectHidden(as('b', `/v1/threads/${thread}/runs`), 'thread_not_found');
    await expectHidden(as('b', `/v1/threads/${thread}/runs/${run}`), 'thread_not_found');
    await expectHidden(as('b', `/v1/threads/${thread}/messages`), 'thread_not_found');
    await expectHidden(as('b', `/v1/threads/${thread}/runs`, 'POST', { assistant_id: otherAssistant }), 'thread_not_found');
    await expectHidden(as('b', `/v1/threads/${thread}`, 'DELETE'), 'thread_not_found');
    const own = await created('b', '/v1/threads');
    await expectHidden(as('b', `/v1/threads/${own}/runs`, 'POST', { assistant_id: assistant }), 'assistant_not_found');
    expect((await as('b', `/v1/threads/${own}/runs`, 'POST', { assistant_id: otherAssistant })).status).toBe(200);
    // createAndRun records the new thread as the caller's.
    const combined = JSON.parse((await as('a', '/v1/threads/runs', 'POST', { assistant_id: assistant })).text) as { thread_id: string };
    expect((await as('a', `/v1/threads/${combined.thread_id}`)).status).toBe(200);
    await expectHidden(as('b', `/v1/threads/${combined.thread_id}`), 'thread_not_found');
    await expectHidden(as('b', '/v1/threads/runs', 'POST', { assistant_id: assistant }), 'assistant_not_found');
    expect((await as('admin', `/v1/threads/${thread}/runs/${run}`)).status).toBe(200);
  });

  it('vector stores and their files: B cannot reach A’s store nor attach A’s file', async () => {
    const form = new FormData();
    form.set('purpose', 'assistants');
    form.set('file', new Blob(['hello']), 'a.txt');
    const uploaded = await fetch(`${gateway.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${keys.a}` }, body: form });
    expect(uploaded.status).toBe(200);
    const fileId = ((await uploaded.json()) as { id: string }).id;
    const store = await created('a', '/v1/vector_stores', { name: 'docs', file_ids: [fileId] });
    await created('a', `/v1/vector_stores/${store}/files`, { file_id: fileId });
    expect(await listedIds('a', '/v1/vector_stores')).toEqual([store]);
    expect(await listedIds('a', `/v1/vector_stores/${store}/files`)).toEqual([fileId]);
    expect(await listedIds('b', '/v1/vector_stores')).toEqual([]);
    await expectHidden(as('b', `/v1/vector_stores/${store}`), 'vector_store_not_found', as('b', '/v1/vector_stores/vs_unknown'));
    await expectHidden(as('b', `/v1/vector_stores/${store}/files`), 'vector_store_not_found');
    await expectHidden(as('b', `/v1/vector_stores/${store}/files/${fileId}`, 'DELETE'), 'vector_store_not_found');
    await expectHidden(as('b', `/v1/vector_stores/${store}/search`, 'POST', { query: 'x' }), 'vector_store_not_found');
    const own = await created('b', '/v1/vector_stores', { name: 'mine' });
    await expectHidden(as('b', `/v1/vector_stores/${own}/files`, 'POST', { file_id: fileId }), 'file_not_found');
    await expectHidden(as('b', '/v1/vector_stores', 'POST', { file_ids: [fileId] }), 'file_not_found');
    expect(await listedIds('admin', '/v1/vector_stores')).toEqual(expect.arrayContaining([store, own]));
  });

  it('ids nested in a body (tool resources, message attachments) must be the caller’s too', async () => {
    const form = new FormData();
    form.set('purpose', 'assistants');
    form.set('file', new Blob(['hello']), 'a.txt');
    const uploaded = await fetch(`${gateway.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${keys.a}` }, body: form });
    const fileId = ((await uploaded.json()) as { id: string }).id;
    const store = await created('a', '/v1/vector_stores', { name: 'nested' });
    const searchA = { tool_resources: { file_search: { vector_store_ids: [store] } } };
    const codeA = { tool_resources: { code_interpreter: { file_ids: [fileId] } } };
    await created('a', '/v1/assistants', { model: 'gpt-4o', ...searchA, ...codeA });
    await expectHidden(as('b', '/v1/assistants', 'POST', { model: 'gpt-4o', ...searchA }), 'vector_store_not_found');
    await expectHidden(as('b', '/v1/assistants', 'POST', { model: 'gpt-4o', ...codeA }), 'file_not_found');
    const attachment = { role: 'user', content: 'hi', attachments: [{ file_id: fileId, tools: [{ type: 'file_search' }] }] };
    await expectHidden(as('b', '/v1/threads', 'POST', { messages: [attachment] }), 'file_not_found');
    await expectHidden(as('b', '/v1/threads/runs', 'POST', { assistant_id: 'asst_none', thread: searchA }), 'assistant_not_found');
    const assistantB = await created('b', '/v1/assistants', { model: 'gpt-4o' });
    await expectHidden(as('b', '/v1/threads/runs', 'POST', { assistant_id: assistantB, thread: searchA }), 'vector_store_not_found');
    const threadB = await created('b', '/v1/threads');
    await expectHidden(as('b', `/v1/threads/${threadB}/messages`, 'POST', attachment), 'file_not_found');
  });

  it('conversations and items: B cannot read, update, delete or list A’s', async () => {
    const conversation = await created('a', '/v1/conversations', { metadata: { topic: 'a' } });
    const item = await created('a', `/v1/conversations/${conversation}/items`, { items: [] });
    expect((await as('a', `/v1/conversations/${conversation}/items/${item}`)).status).toBe(200);
    await expectHidden(as('b', `/v1/conversations/${conversation}`), 'conversation_not_found', as('b', '/v1/conversations/conv_x'));
    await expectHidden(as('b', `/v1/conversations/${conversation}`, 'POST', { metadata: {} }), 'conversation_not_found');
    await expectHidden(as('b', `/v1/conversations/${conversation}/items`), 'conversation_not_found');
    await expectHidden(as('b', `/v1/conversations/${conversation}/items/${item}`, 'DELETE'), 'conversation_not_found');
    await expectHidden(as('b', `/v1/conversations/${conversation}`, 'DELETE'), 'conversation_not_found');
    expect((await as('admin', `/v1/conversations/${conversation}`)).status).toBe(200);
    expect((await as('a', `/v1/conversations/${conversation}`, 'DELETE')).status).toBe(200);
  });

  it('stored chat completions: a `store: true` answer is the caller’s to read back; B gets chat_completion_not_found', async () => {
    mock.route('GET', '/chat/completions/*', (request, response) => {
      upstream.calls.push(request);
      sendJson(response, 200, { id: request.path.split('/').at(-1), object: 'chat.completion' });
    });
    const messages = [{ role: 'user', content: 'hi' }];
    const stored = await callJson(gateway, '/v1/chat/completions', 200, {
      token: keys.a,
      body: { model: 'gpt-4o-mini', messages, store: true },
    });
    const id = stored['id'] as string;
    expect((await as('a', `/v1/chat/completions/${id}`)).status).toBe(200);
    expect(await listedIds('a', '/v1/chat/completions')).toEqual([id]);
    await expectHidden(as('b', `/v1/chat/completions/${id}`), 'chat_completion_not_found');
    await expectHidden(as('b', `/v1/chat/completions/${id}/messages`), 'chat_completion_not_found');
    expect(await listedIds('b', '/v1/chat/completions')).toEqual([]);
    const unstored = await callJson(gateway, '/v1/chat/completions', 200, { token: keys.a, body: { model: 'gpt-4o-mini', messages } });
    await expectHidden(as('a', `/v1/chat/completions/${unstored['id'] as string}`), 'chat_completion_not_found');
  });

  it('the provider hint picks the instance and is not sent upstream; the organization API stays unrouted', async () => {
    const reply = await as('a', '/v1/assistants?provider=other', 'POST', { model: 'gpt-4o', provider: 'other' });
    expect(reply.status).toBe(200);
    const sent = upstream.calls.at(-1) as MockRequest;
    expect(sent.headers.authorization).toBe('Bearer sk-other');
    expect(sent.query).toBe('');
    expect(sent.body).toEqual({ model: 'gpt-4o' });
    const id = (JSON.parse(reply.text) as { id: string }).id;
    // Without a hint the id is found on the instance it was created on.
    expect((await as('a', `/v1/assistants/${id}`)).status).toBe(200);
    expect(upstream.calls.at(-1)?.headers.authorization).toBe('Bearer sk-other');
    // An id of `..` never reaches the upstream (the path is normalised first: no route).
    const before = upstream.calls.length;
    expectEnvelope(await as('admin', '/v1/assistants/%2E%2E'), { status: 404, type: 'not_found_error', code: 'unknown_route' });
    expect(upstream.calls.length).toBe(before);
    // A key's model allowlist holds for the models a resource names.
    const limited = await callJson(gateway, '/admin/api-keys', 201, {
      token: 'resources-master-key',
      body: { name: 'limited', user_path: '/tenants/c', allowed_models: ['openai/gpt-4o-mini'] },
    });
    const token = limited['key'] as string;
    const refused = await call(gateway, '/v1/assistants', { token, body: { model: 'gpt-4o' } });
    expectEnvelope(refused, { status: 403, type: 'permission_error', code: 'model_not_allowed', param: 'model' });
    expect((await call(gateway, '/v1/assistants', { token, body: { model: 'gpt-4o-mini' } })).status).toBe(200);
    for (const path of ['/v1/organization/users', '/v1/organization/projects/p/api_keys']) {
      expectEnvelope(await as('admin', path), { status: 404, type: 'not_found_error', code: 'unknown_route' });
    }
  });
});
