import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, callJson, type RawReply } from '../support/http.ts';
import { type MockRequest, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { uploadFile } from '../support/tenants.ts';
import { sendJson } from '../support/upstream.ts';

// The gaps ADR 40 listed (issue 30): a streamed `store: true` chat completion is recorded as the
// caller's, and `/v1/responses` (and the passthrough's `responses`, compact, input_tokens,
// conversation items) names only the caller's vector stores, containers, files and skills.
// Another tenant's id answers exactly like an unknown one, and nothing reaches the upstream.

const prefixes: Record<string, string> = {
  vector_stores: 'vs_',
  files: 'file-',
  containers: 'cntr_',
  conversations: 'conv_',
  skills: 'skill_',
  characters: 'char_',
};

/** An in-memory OpenAI account: collections create `{collection}/{id}`, GET reads, `responses` answers; every call is noted. */
function serveAccount(mock: MockUpstream): MockRequest[] {
  const calls: MockRequest[] = [];
  const objects = new Map<string, Record<string, unknown>>();
  let next = 0;
  const collection = (request: MockRequest, response: Parameters<typeof sendJson>[0]): void => {
    calls.push(request);
    const path = request.path.replace(/^\/(v1\/)?/, '');
    const found = objects.get(path);
    if (request.method === 'GET')
      return found === undefined ? sendJson(response, 404, { error: { message: 'no' } }) : sendJson(response, 200, found);
    const name = path.split('/').at(-1) as string;
    next += 1;
    const created = { id: `${prefixes[name] ?? 'obj_'}${next}`, object: name };
    objects.set(`${path}/${created.id}`, created);
    sendJson(response, 200, created);
  };
  for (const name of Object.keys(prefixes)) {
    for (const method of ['GET', 'POST']) mock.route(method, `/${name === 'characters' ? 'videos/characters' : name}*`, collection);
  }
  for (const path of ['/responses', '/responses/compact', '/responses/input_tokens']) {
    mock.route('POST', path, (request, response) => {
      calls.push(request);
      next += 1;
      const output: Record<string, unknown>[] = [
        { id: `msg_${next}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] },
      ];
      // A code interpreter with `container: { type: 'auto' }` runs in a container the upstream creates.
      const tools = (request.body as { tools?: { type?: string; container?: unknown }[] } | null)?.tools ?? [];
      if (tools.some((tool) => tool.type === 'code_interpreter' && typeof tool.container === 'object')) {
        const id = `cntr_auto_${next}`;
        objects.set(`containers/${id}`, { id, object: 'container' });
        output.push({ id: `ci_${next}`, type: 'code_interpreter_call', container_id: id, code: '1+1', outputs: null });
      }
      sendJson(response, 200, { id: `resp_${next}`, object: 'response', status: 'completed', output, input_tokens: 1 });
    });
  }
  mock.route('GET', '/chat/completions/*', (request, response) => {
    calls.push(request);
    sendJson(response, 200, { id: request.path.split('/').at(-1), object: 'chat.completion' });
  });
  return calls;
}

describe('drop-in gaps: streamed stored completions, state named by Responses requests', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let calls: MockRequest[];
  const keys = { a: '', b: '' };

  beforeAll(async () => {
    mock = await startMockUpstream();
    calls = serveAccount(mock);
    const configYaml = `
providers:
  openai: { type: openai, api_key: sk-openai, base_url: "${mock.url}", models: [gpt-4o-mini] }
  compat: { type: openai-compatible, api_key: sk-compat, base_url: "${mock.url}", models: [local-model] }
`;
    gateway = await startGateway({ env: { MASTER_KEY: 'gaps-master-key' }, configYaml });
    const create = async (name: string, userPath: string): Promise<string> =>
      (await callJson(gateway, '/admin/api-keys', 201, { token: 'gaps-master-key', body: { name, user_path: userPath } }))['key'] as string;
    keys.a = await create('tenant-a', '/tenants/a');
    keys.b = await create('tenant-b', '/tenants/b');
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  const as = (tenant: keyof typeof keys, path: string, body?: unknown): Promise<RawReply> =>
    call(gateway, path, { token: keys[tenant], ...(body === undefined ? {} : { body }) });
  const created = async (tenant: keyof typeof keys, path: string): Promise<string> => {
    const reply = await as(tenant, path, {});
    expect(reply.status, reply.text).toBe(200);
    return (JSON.parse(reply.text) as { id: string }).id;
  };
  /** B's answer for A's id is the answer for an unknown id (the id aside), and nothing reaches the upstream. */
  const expectHidden = async (foreign: () => Promise<RawReply>, unknown: () => Promise<RawReply>, code: string): Promise<void> => {
    const before = calls.length;
    const hidden = await foreign();
    const error = expectEnvelope(hidden, { status: 404, type: 'not_found_error', code });
    expect(calls.length).toBe(before);
    const other = expectEnvelope(await unknown(), { status: 404, type: 'not_found_error', code });
    expect({ ...other, message: '' }).toEqual({ ...error, message: '' });
    expect(calls.length).toBe(before);
  };

  it('a streamed `store: true` chat completion is its caller’s as soon as the stream has ended; B gets chat_completion_not_found', async () => {
    const streamed = await as('a', '/v1/chat/completions', {
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      store: true,
    });
    expect(streamed.status, streamed.text).toBe(200);
    expect(streamed.text).toContain('data: [DONE]');
    const id = /"id":"(chatcmpl-[^"]+)"/.exec(streamed.text)?.[1] ?? '';
    expect(id).not.toBe('');
    // Read right after the stream: recorded before its last bytes reached the client.
    const read = await as('a', `/v1/chat/completions/${id}`);
    expect(read.status, read.text).toBe(200);
    await expectHidden(
      () => as('b', `/v1/chat/completions/${id}`),
      () => as('b', '/v1/chat/completions/chatcmpl-nope'),
      'chat_completion_not_found',
    );
    // Not stored (no `store: true`, or an instance that keeps nothing): not recorded.
    for (const body of [
      { model: 'openai/gpt-4o-mini', stream: true },
      { model: 'compat/local-model', stream: true, store: true },
    ]) {
      const other = await as('a', '/v1/chat/completions', { ...body, messages: [{ role: 'user', content: 'hi' }] });
      const otherId = /"id":"(chatcmpl-[^"]+)"/.exec(other.text)?.[1] ?? '';
      expect(otherId).not.toBe('');
      expectEnvelope(await as('a', `/v1/chat/completions/${otherId}`), {
        status: 404,
        type: 'not_found_error',
        code: 'chat_completion_not_found',
      });
    }
  });
  it('a `store: true` chat completion through /p/{instance}, JSON or streamed, is its caller’s to read back through /v1', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    for (const stream of [false, true]) {
      const sent = await as('a', '/p/openai/v1/chat/completions', { model: 'gpt-4o-mini', messages, stream, store: true });
      expect(sent.status, sent.text).toBe(200);
      const id = /"id":"(chatcmpl-[^"]+)"/.exec(sent.text)?.[1] ?? '';
      expect(id).not.toBe('');
      const read = await as('a', `/v1/chat/completions/${id}`);
      expect(read.status, read.text).toBe(200);
      await expectHidden(
        () => as('b', `/v1/chat/completions/${id}`),
        () => as('b', '/v1/chat/completions/chatcmpl-nope'),
        'chat_completion_not_found',
      );
    }
  });

  it('/v1/responses and /p/{instance}/responses name only the caller’s vector stores, containers, files, skills and conversations', async () => {
    const store = await created('a', '/v1/vector_stores');
    const container = await created('a', '/v1/containers');
    const file = await uploadFile(gateway.url, keys.a, 'a');
    const skill = await created('a', '/v1/skills');
    const conversation = await created('a', '/v1/conversations');
    const base = { model: 'gpt-4o-mini', input: 'hi' };
    // Each body names one of A's ids (`{}` stands for it) and the code an unknown id gets.
    const cases: [(id: string) => Record<string, unknown>, string, string][] = [
      [(id) => ({ tools: [{ type: 'file_search', vector_store_ids: [id] }] }), store, 'vector_store_not_found'],
      [(id) => ({ tools: [{ type: 'code_interpreter', container: id }] }), container, 'container_not_found'],
      [(id) => ({ tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: [id] } }] }), file, 'file_not_found'],
      [
        (id) => ({ tools: [{ type: 'shell', environment: { type: 'container_reference', container_id: id } }] }),
        container,
        'container_not_found',
      ],
      [
        (id) => ({
          tools: [{ type: 'shell', environment: { type: 'container_auto', skills: [{ type: 'skill_reference', skill_id: id }] } }],
        }),
        skill,
        'skill_not_found',
      ],
      [(id) => ({ tools: [{ type: 'image_generation', input_image_mask: { file_id: id } }] }), file, 'file_not_found'],
      [(id) => ({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: id }] }] }), file, 'file_not_found'],
      [(id) => ({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: id, detail: 'auto' }] }] }), file, 'file_not_found'],
      [
        (id) => ({ input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_file', file_id: id }] }] }),
        file,
        'file_not_found',
      ],
      [(id) => ({ conversation: id }), conversation, 'conversation_not_found'],
    ];
    for (const [body, id, code] of cases) {
      for (const path of ['/v1/responses', '/p/openai/v1/responses', '/v1/responses/input_tokens', '/p/openai/v1/responses/compact']) {
        if (path.endsWith('compact') && code === 'conversation_not_found') continue;
        await expectHidden(
          () => as('b', path, { ...base, ...body(id) }),
          () => as('b', path, { ...base, ...body('unknown_1') }),
          code,
        );
        const before = calls.length;
        const own = await as('a', path, { ...base, ...body(id) });
        expect(own.status, `${path} ${JSON.stringify(body(id))}: ${own.text}`).toBe(200);
        expect(calls.length).toBe(before + 1);
      }
    }
  });

  it('a container the upstream created for A’s code interpreter (`container: auto`) is A’s: B gets container_not_found', async () => {
    const reply = await as('a', '/v1/responses', {
      model: 'gpt-4o-mini',
      input: 'hi',
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
    });
    expect(reply.status, reply.text).toBe(200);
    const output = (JSON.parse(reply.text) as { output: { type: string; container_id?: string }[] }).output;
    const container = output.find((item) => item.type === 'code_interpreter_call')?.container_id as string;
    expect(container).toMatch(/^cntr_auto_/);
    const read = await as('a', `/v1/containers/${container}`);
    expect(read.status, read.text).toBe(200);
    const reuse = { model: 'gpt-4o-mini', input: 'again', tools: [{ type: 'code_interpreter', container }] };
    expect((await as('a', '/v1/responses', reuse)).status).toBe(200);
    await expectHidden(
      () => as('b', `/v1/containers/${container}`),
      () => as('b', '/v1/containers/cntr_unknown'),
      'container_not_found',
    );
    await expectHidden(
      () => as('b', '/v1/responses', reuse),
      () => as('b', '/v1/responses', { ...reuse, tools: [{ type: 'code_interpreter', container: 'cntr_unknown' }] }),
      'container_not_found',
    );
  });

  it('compact and input_tokens name only the caller’s responses and items, on /v1 as through /p', async () => {
    const created = await as('a', '/v1/responses', { model: 'gpt-4o-mini', input: 'hi' });
    expect(created.status, created.text).toBe(200);
    const { id, output } = JSON.parse(created.text) as { id: string; output: { id: string }[] };
    const item = output[0]?.id ?? '';
    const cases: [(id: string) => Record<string, unknown>, string, string][] = [
      [(named) => ({ input: [{ type: 'item_reference', id: named }] }), item, 'item_not_found'],
      [(named) => ({ previous_response_id: named, input: 'hi' }), id, 'response_not_found'],
    ];
    for (const [body, named, code] of cases) {
      for (const path of ['/v1/responses/input_tokens', '/v1/responses/compact', '/p/openai/v1/responses/input_tokens']) {
        await expectHidden(
          () => as('b', path, { model: 'gpt-4o-mini', ...body(named) }),
          () => as('b', path, { model: 'gpt-4o-mini', ...body('unknown_1') }),
          code,
        );
        const own = await as('a', path, { model: 'gpt-4o-mini', ...body(named) });
        expect(own.status, `${path}: ${own.text}`).toBe(200);
      }
    }
  });

  it('conversation items name only the caller’s files', async () => {
    const file = await uploadFile(gateway.url, keys.a, 'a');
    const conversation = await created('b', '/v1/conversations');
    const items = (id: string) => ({ items: [{ type: 'message', role: 'user', content: [{ type: 'input_file', file_id: id }] }] });
    await expectHidden(
      () => as('b', `/v1/conversations/${conversation}/items`, items(file)),
      () => as('b', `/v1/conversations/${conversation}/items`, items('file-unknown')),
      'file_not_found',
    );
    await expectHidden(
      () => as('b', '/v1/conversations', items(file)),
      () => as('b', '/v1/conversations', items('file-unknown')),
      'file_not_found',
    );
    expect((await as('a', '/v1/conversations', items(file))).status).toBe(200);
  });
  it('GET /v1/videos/characters/{id} is routed (a static segment wins over a video id), owned like the rest', async () => {
    const character = await created('a', '/v1/videos/characters');
    const read = await as('a', `/v1/videos/characters/${character}`);
    expect(read.status, read.text).toBe(200);
    expect(calls.at(-1)?.path).toBe(`/videos/characters/${character}`);
    await expectHidden(
      () => as('b', `/v1/videos/characters/${character}`),
      () => as('b', '/v1/videos/characters/content'),
      'video_character_not_found',
    );
  });
});
