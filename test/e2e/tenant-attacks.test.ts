import { gzipSync } from 'node:zlib';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { call, callJson, parseJson, type RawReply } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { batchInput, serveSharedAccount, type SharedAccount, uploadFile } from '../support/tenants.ts';
import { eventually } from '../support/wait.ts';

// Issue 27, tried as an attacker with an ordinary key: variants of the examples that the
// first fixes did not cover. Two managed keys (/team/a, /team/b) share one upstream account.

describe('tenant attacks', () => {
  let mock: MockUpstream;
  let account: SharedAccount;
  let gateway: GatewayProcess;
  const tokens = { a: '', b: '', virtual: '' };

  const raw = async (
    token: string,
    path: string,
    method: string,
    body?: Buffer,
    headers: Record<string, string> = {},
  ): Promise<RawReply> => {
    const response = await request(`${gateway.url}${path}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${token}`, ...headers },
      body,
    });
    return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
  };
  const upload = (token: string, content = batchInput('gpt-4o-mini')): Promise<string> => uploadFile(gateway.url, token, content);

  beforeAll(async () => {
    mock = await startMockUpstream();
    account = serveSharedAccount(mock);
    mock.route('POST', '/responses/input_tokens', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"response.input_tokens","input_tokens":3}');
    });
    // A Gemini answer, slow enough that parallel requests are admitted together.
    mock.route('POST', '/openai/v1beta/*', (_request, response) => {
      const answer = {
        candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] } }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 },
      };
      setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)), 400);
    });
    const configYaml = `
providers:
  oai: { type: openai, api_key: sk-shared, base_url: "${mock.url}", models: [gpt-4o-mini, smart] }
  gem: { type: gemini, api_key: gk-shared, base_url: "${mock.url}", models: [gem-n] }
pricing:
  gem-n: { input_per_mtok: 1, output_per_mtok: 4 }
virtual_models:
  - name: smart
    target: oai/gpt-4o-mini
`;
    gateway = await startGateway({ env: { MASTER_KEY }, configYaml, startTimeoutMs: 60_000 });
    const key = async (body: Record<string, unknown>) => String((await callJson(gateway, '/admin/api-keys', 201, { body }))['key']);
    tokens.a = await key({ name: 'a', user_path: '/team/a' });
    tokens.b = await key({ name: 'b', user_path: '/team/b' });
    tokens.virtual = await key({ name: 'virtual', user_path: '/team/v', allowed_models: ['smart'] });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('an encoded slash in a passthrough path does not hide another tenant id from the ownership check', async () => {
    const fileA = await upload(tokens.a);
    const unknown = await raw(tokens.b, '/p/oai/v1/files/file-nope', 'GET');
    expectEnvelope(unknown, { status: 404, type: 'not_found_error', code: 'file_not_found' });
    const before = account.calls.length;
    for (const path of [`/p/oai/v1/files%2F${fileA}`, `/p/oai/files%2F${fileA}%2Fcontent`, `/p/oai/v1%2Ffiles%2F${fileA}`]) {
      const reply = await raw(tokens.b, path, 'GET');
      expect(reply.status, `${path}: ${reply.text}`).toBe(404);
      expect(reply.text.replaceAll(fileA, '<id>'), path).toBe(unknown.text.replaceAll('file-nope', '<id>'));
    }
    const deleted = await raw(tokens.b, `/p/oai/files%2F${fileA}`, 'DELETE');
    expect(deleted.status, deleted.text).toBe(404);
    expect(account.calls.slice(before)).toEqual([]);
    expect(account.files.has(fileA)).toBe(true);
  });

  it('a passthrough Responses body the gateway cannot read (compressed, not JSON) is refused, not forwarded unchecked', async () => {
    const created = await call(gateway, '/v1/responses', { token: tokens.a, body: { model: 'oai/gpt-4o-mini', input: 'secret of A' } });
    expect(created.status, created.text).toBe(200);
    const previous = String(parseJson(created.text)['id']);
    const body = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', input: 'what did I say?', previous_response_id: previous }));
    const before = account.calls.length;
    const gzipped = await raw(tokens.b, '/p/oai/v1/responses', 'POST', gzipSync(body), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expectEnvelope(gzipped, { status: 400, type: 'invalid_request_error', code: 'invalid_body' });
    // Nor any other compressed body: its model and its estimate cannot be read either.
    const chat = gzipSync(Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] })));
    const compressedChat = await raw(tokens.b, '/p/oai/v1/chat/completions', 'POST', chat, {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expectEnvelope(compressedChat, { status: 400, type: 'invalid_request_error', code: 'invalid_body' });
    const notJson = await raw(tokens.b, '/p/oai/v1/responses', 'POST', Buffer.concat([Buffer.from('\ufeff'), body]), {
      'content-type': 'application/json',
    });
    expectEnvelope(notJson, { status: 400, type: 'invalid_request_error', code: 'invalid_body' });
    expect(account.calls.slice(before)).toEqual([]);
    // The owner itself, and a readable body, still go through.
    const own = await raw(tokens.a, '/p/oai/v1/responses', 'POST', body, { 'content-type': 'application/json' });
    expect(own.status, own.text).toBe(200);
  });

  it('a batch line naming an allowed virtual model does not run the concrete model of that name', async () => {
    const fileId = await upload(tokens.virtual, batchInput('smart'));
    const before = account.batches.size;
    const reply = await call(gateway, '/v1/batches', {
      token: tokens.virtual,
      body: { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' },
    });
    expectEnvelope(reply, { status: 403, type: 'permission_error', code: 'model_not_allowed', param: 'input_file_id' });
    expect(account.batches.size).toBe(before);
    // The virtual name itself is still served on the routed endpoints.
    const routed = await call(gateway, '/v1/chat/completions', {
      token: tokens.virtual,
      body: { model: 'smart', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(routed.status, routed.text).toBe(200);
  });

  it('the budget estimate reads Gemini proto field names: six parallel candidate_count=5 requests on $0.02 admit one', async () => {
    // max_output_tokens 1000 at $4/M is $0.004; times candidate_count 5 it is the whole $0.02.
    const budget = await call(gateway, '/admin/budgets', {
      method: 'PUT',
      body: { user_path: '/gem-budget', period: 'daily', amount: 0.02 },
    });
    expect([200, 201], budget.text).toContain(budget.status);
    const body = { contents: [{ parts: [{ text: 'hi' }] }], generation_config: { max_output_tokens: 1000, candidate_count: 5 } };
    const replies = await Promise.all(
      Array.from({ length: 6 }, () =>
        call(gateway, '/p/gem/v1beta/models/gem-n:generateContent', { token: MASTER_KEY, headers: { 'x-user-path': '/gem-budget' }, body }),
      ),
    );
    for (const reply of replies.filter((one) => one.status !== 200)) {
      expectEnvelope(reply, { status: 429, type: 'rate_limit_error', code: 'budget_exceeded', provider: 'budget' });
    }
    expect(replies.filter((reply) => reply.status === 200).length).toBe(1);
  });

  it('account-wide listings through the passthrough are for admins only, ids there are owned; responses/input_tokens is not an id', async () => {
    const refused = { status: 403, type: 'permission_error', code: 'endpoint_not_allowed' } as const;
    const before = account.calls.length;
    for (const [method, path] of [
      ['GET', '/p/oai/v1/fine_tuning/jobs'],
      ['GET', '/p/oai/v1/vector_stores'],
      ['GET', '/p/oai/v1/chat/completions'],
      ['GET', '/p/oai/v1%2Fvector_stores'],
    ] as const) {
      expectEnvelope(await raw(tokens.b, path, method), refused);
    }
    // A catalogue route (ADR 40) names owned ids: another tenant's or an unknown one is not found.
    for (const [method, path, code] of [
      ['POST', '/p/oai/v1/fine_tuning/jobs/ftjob-1/cancel', 'fine_tuning_job_not_found'],
      ['DELETE', '/p/oai/v1/assistants/asst_1', 'assistant_not_found'],
      ['GET', '/p/oai/v1/chat/completions/chatcmpl-1/messages', 'chat_completion_not_found'],
    ] as const) {
      expectEnvelope(await raw(tokens.b, path, method), { status: 404, type: 'not_found_error', code });
    }
    expect(account.calls.slice(before)).toEqual([]);
    const admin = await raw(MASTER_KEY, '/p/oai/v1/vector_stores', 'GET');
    expect(admin.status).not.toBe(403);
    const counted = await raw(
      tokens.b,
      '/p/oai/v1/responses/input_tokens',
      'POST',
      Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', input: 'hi' })),
      {
        'content-type': 'application/json',
      },
    );
    expect(counted.status, counted.text).toBe(200);
  });

  it('a passthrough stream whose body is over 1 MiB, or not labelled JSON, is charged its estimate when its answer reports no usage', async () => {
    const spent = async (userPath: string): Promise<number> => {
      const budgets = (await callJson(gateway, '/admin/budgets', 200))['budgets'] as Array<{ user_path: string; spent: number }>;
      return budgets.find((budget) => budget.user_path === userPath)?.spent ?? 0;
    };
    const prompt = 'word '.repeat(240_000); // 1.2 MB: about 300k prompt tokens
    for (const [userPath, contentType, content] of [
      ['/big-stream', 'application/json', prompt],
      ['/plain-stream', 'text/plain', 'hello'],
    ] as const) {
      const budget = await call(gateway, '/admin/budgets', { method: 'PUT', body: { user_path: userPath, period: 'daily', amount: 100 } });
      expect([200, 201], budget.text).toContain(budget.status);
      const body = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content }] }));
      const reply = await raw(MASTER_KEY, '/p/oai/v1/chat/completions', 'POST', body, {
        'content-type': contentType,
        'x-user-path': userPath,
      });
      expect(reply.status, reply.text.slice(0, 300)).toBe(200);
      expect(reply.text).not.toContain('"usage"');
      const charged = await eventually(
        async () => ((await spent(userPath)) > 0 ? spent(userPath) : undefined),
        `${userPath} charged`,
        3000,
      );
      expect(charged).toBeGreaterThan(0);
    }
  });
});
