import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, callJson, parseJson, type RawReply } from '../support/http.ts';
import { signingKey, signToken } from '../support/mock-jwks.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { backendNames, createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { batchInput, serveSharedAccount, type SharedAccount, uploadFile } from '../support/tenants.ts';

// Issue 27 items 1 and 4: files, batches and native Responses belong to the tenant that created
// them. Two managed keys (/team/a, /team/b) and a JWT tenant share one upstream account; each
// read, write and delete of another tenant's id answers exactly like an unknown id.

const issuer = 'https://idp.tenants.test/';

describe.each(backendNames)('tenant isolation on %s', (backend) => {
  let mock: MockUpstream;
  let account: SharedAccount;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  const tokens: Record<'a' | 'b' | 'jwt' | 'admin' | 'narrow' | 'parent', string> = {
    a: '',
    b: '',
    jwt: '',
    admin: '',
    narrow: '',
    parent: '',
  };
  let keyA = '';

  const as = (token: string) => ({
    get: (path: string) => call(gateway, path, { token }),
    post: (path: string, body: unknown) => call(gateway, path, { token, body }),
    delete: (path: string) => call(gateway, path, { token, method: 'DELETE' }),
  });
  const upload = (token: string, content: string): Promise<string> => uploadFile(gateway.url, token, content);
  const createBatch = async (token: string, fileId: string): Promise<string> => {
    const reply = await as(token).post('/v1/batches', {
      input_file_id: fileId,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect(reply.status, reply.text).toBe(200);
    return String(parseJson(reply.text)['id']);
  };
  const createResponse = async (token: string, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> => {
    const reply = await as(token).post('/v1/responses', { model: 'openai/gpt-4o-mini', input: 'hi', ...extra });
    expect(reply.status, reply.text).toBe(200);
    return parseJson(reply.text);
  };
  /** A not-owned id answers exactly what an unknown id answers (the id in the message aside). */
  const expectLikeUnknown = (reply: RawReply, unknown: RawReply, id: string, unknownId: string, code: string): void => {
    expectEnvelope(reply, { status: 404, type: 'not_found_error', code });
    expect(reply.text.replaceAll(id, '<id>')).toBe(unknown.text.replaceAll(unknownId, '<id>'));
  };
  const ids = (reply: RawReply): string[] => (parseJson(reply.text)['data'] as { id: string }[]).map((item) => item.id);

  beforeAll(async () => {
    mock = await startMockUpstream();
    account = serveSharedAccount(mock);
    database = await createGatewayDatabase(backend);
    const signing = await signingKey('tenants');
    const configYaml = `
providers:
  openai: { type: openai, api_key: sk-shared, base_url: "${mock.url}", models: [gpt-4o-mini, gpt-4o] }
auth:
  jwt:
    issuers:
      - issuer: ${issuer}
        keys: { keys: [${JSON.stringify(signing.publicJwk)}] }
        audiences: [gateway]
        user_path: /jwt/{claims.sub}
usage:
  flush_interval_ms: 20
`;
    gateway = await startGateway({ env: { MASTER_KEY: 'test-master-key', ...database.env }, configYaml, startTimeoutMs: 60_000 });
    storage = await database.open(gateway);
    const key = async (body: Record<string, unknown>) => callJson(gateway, '/admin/api-keys', 201, { body });
    const a = await key({ name: 'a', user_path: '/team/a' });
    keyA = String(a['id']);
    tokens.a = String(a['key']);
    tokens.b = String((await key({ name: 'b', user_path: '/team/b' }))['key']);
    tokens.parent = String((await key({ name: 'team', user_path: '/team' }))['key']);
    tokens.admin = String((await key({ name: 'ops', user_path: '/ops', role: 'admin' }))['key']);
    tokens.narrow = String((await key({ name: 'narrow', user_path: '/team/c', allowed_models: ['openai/gpt-4o-mini'] }))['key']);
    tokens.jwt = await signToken(signing, { iss: issuer, aud: 'gateway', sub: 'jay' });
    account.addFile('file-legacy', batchInput('gpt-4o-mini'));
  }, 90_000);

  afterAll(async () => {
    await storage?.close();
    await gateway?.stop();
    await database?.dispose();
    await mock?.close();
  });

  it('files: reads, downloads and deletes of another tenant id answer like an unknown id; listings show only your own', async () => {
    const fileA = await upload(tokens.a, batchInput('gpt-4o-mini'));
    const fileB = await upload(tokens.b, batchInput('gpt-4o-mini'));
    const fileJ = await upload(tokens.jwt, batchInput('gpt-4o-mini'));
    for (const [token, own, foreign] of [
      [tokens.b, fileB, fileA],
      [tokens.jwt, fileJ, fileA],
      [tokens.a, fileA, fileJ],
    ] as const) {
      for (const suffix of ['', '/content']) {
        const unknown = await as(token).get(`/v1/files/file-nope${suffix}`);
        expectLikeUnknown(await as(token).get(`/v1/files/${foreign}${suffix}`), unknown, foreign, 'file-nope', 'file_not_found');
        expect((await as(token).get(`/v1/files/${own}${suffix}`)).status).toBe(200);
      }
      const unknownDelete = await as(token).delete('/v1/files/file-nope');
      expectLikeUnknown(await as(token).delete(`/v1/files/${foreign}`), unknownDelete, foreign, 'file-nope', 'file_not_found');
      expect(ids(await as(token).get('/v1/files'))).toEqual([own]);
    }
    expect(account.files.has(fileA) && account.files.has(fileJ)).toBe(true);
    expect(account.calls.filter((line) => line.includes('file-nope'))).toEqual([]);
    // An ancestor path sees its descendants' files, not the JWT tenant's.
    expect(ids(await as(tokens.parent).get('/v1/files')).sort()).toEqual([fileA, fileB].sort());
    expect((await as(tokens.a).delete(`/v1/files/${fileA}`)).status).toBe(200);
    expect(account.files.has(fileA)).toBe(false);
  });

  it('files: a listing pages truthfully through the caller own files only', async () => {
    const own = [];
    for (let index = 0; index < 3; index += 1) {
      own.push(await upload(tokens.b, 'x'));
      await upload(tokens.a, 'y');
    }
    const listed: string[] = [];
    let after = '';
    for (let page = 0; page < 5; page += 1) {
      const body = parseJson((await as(tokens.b).get(`/v1/files?limit=2${after}`)).text);
      const data = (body['data'] as { id: string }[]).map((file) => file.id);
      listed.push(...data);
      expect(body['last_id']).toBe(data.at(-1) ?? null);
      if (body['has_more'] !== true) break;
      expect(data).toHaveLength(2);
      after = `&after=${String(body['last_id'])}`;
    }
    expect(listed.slice(0, 3)).toEqual([...own].reverse());
    expect(listed).toHaveLength(4);
    expect(new Set(listed).size).toBe(4);
  });

  it('batches: another tenant batch or input file is not found; listings show only your own', async () => {
    const fileA = await upload(tokens.a, batchInput('gpt-4o-mini'));
    const unknownFile = await as(tokens.b).post('/v1/batches', {
      input_file_id: 'file-nope',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const stolen = await as(tokens.b).post('/v1/batches', {
      input_file_id: fileA,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expectLikeUnknown(stolen, unknownFile, fileA, 'file-nope', 'file_not_found');
    const batchA = await createBatch(tokens.a, fileA);
    const fileJ = await upload(tokens.jwt, batchInput('gpt-4o-mini'));
    const batchJ = await createBatch(tokens.jwt, fileJ);
    for (const [token, foreign] of [
      [tokens.b, batchA],
      [tokens.jwt, batchA],
      [tokens.a, batchJ],
    ] as const) {
      expectLikeUnknown(
        await as(token).get(`/v1/batches/${foreign}`),
        await as(token).get('/v1/batches/batch_nope'),
        foreign,
        'batch_nope',
        'batch_not_found',
      );
      const unknownCancel = await as(token).post('/v1/batches/batch_nope/cancel', {});
      expectLikeUnknown(await as(token).post(`/v1/batches/${foreign}/cancel`, {}), unknownCancel, foreign, 'batch_nope', 'batch_not_found');
      expect(ids(await as(token).get('/v1/batches'))).not.toContain(foreign);
    }
    expect(account.batches.get(batchA)?.['status']).toBe('validating');
    expect(ids(await as(tokens.a).get('/v1/batches'))).toContain(batchA);
    expect((await as(tokens.a).post(`/v1/batches/${batchA}/cancel`, {})).status).toBe(200);
  });

  it('batches: the input file models are checked against the key allowlist', async () => {
    const refusedFile = await upload(tokens.narrow, batchInput('gpt-4o-mini', 'gpt-4o'));
    const before = account.batches.size;
    const refused = await as(tokens.narrow).post('/v1/batches', {
      input_file_id: refusedFile,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect(expectEnvelope(refused, { status: 403, type: 'permission_error', code: 'model_not_allowed' }).message).toContain(
      'openai/gpt-4o',
    );
    expect(account.batches.size).toBe(before);
    await createBatch(tokens.narrow, await upload(tokens.narrow, batchInput('gpt-4o-mini', 'gpt-4o-mini')));
  });

  it('batches: a completed batch is charged once to its owner, whose output file it can read', async () => {
    const batch = await createBatch(tokens.a, await upload(tokens.a, batchInput('gpt-4o-mini')));
    const usage = { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 };
    const outputId = account.complete(
      batch,
      [0, 1].map((n) => ({ custom_id: `r${n}`, response: { status_code: 200, body: { model: 'gpt-4o-mini', usage } } })),
    );
    const first = await as(tokens.b).get(`/v1/batches/${batch}`);
    expect(first.status).toBe(404);
    const seen = await as(tokens.a).get(`/v1/batches/${batch}`);
    expect(seen.status).toBe(200);
    const record = await usageRecordOf(storage, String(seen.headers['x-request-id']));
    expect(record).toMatchObject({
      userPath: '/team/a',
      apiKeyId: keyA,
      endpoint: '/v1/batches',
      model: 'gpt-4o-mini',
      promptTokens: 2000,
      completionTokens: 1000,
    });
    expect(record.costUsd).toBeGreaterThan(0);
    const again = await as(tokens.a).get('/v1/batches');
    expect(ids(again)).toContain(batch);
    await sleep(300);
    expect(await storage.usage.findByRequestId(String(again.headers['x-request-id']))).toEqual([]);
    expect((await as(tokens.a).get(`/v1/files/${outputId}/content`)).status).toBe(200);
    expect((await as(tokens.b).get(`/v1/files/${outputId}/content`)).status).toBe(404);
  });

  it('native responses: another tenant response, its items and conversations are not found, and never reach the upstream', async () => {
    const created = await createResponse(tokens.a);
    const id = String(created['id']);
    const itemId = String((created['output'] as { id: string }[])[0]?.id);
    for (const token of [tokens.b, tokens.jwt]) {
      for (const suffix of ['', '/input_items']) {
        const unknown = await as(token).get(`/v1/responses/resp_nope${suffix}`);
        expectLikeUnknown(await as(token).get(`/v1/responses/${id}${suffix}`), unknown, id, 'resp_nope', 'response_not_found');
      }
      expectLikeUnknown(
        await as(token).delete(`/v1/responses/${id}`),
        await as(token).delete('/v1/responses/resp_nope'),
        id,
        'resp_nope',
        'response_not_found',
      );
      const calls = account.calls.length;
      const body = { model: 'openai/gpt-4o-mini', input: 'hi' };
      const unknownPrevious = await as(token).post('/v1/responses', { ...body, previous_response_id: 'resp_nope' });
      const previous = await as(token).post('/v1/responses', { ...body, previous_response_id: id });
      expectLikeUnknown(previous, unknownPrevious, id, 'resp_nope', 'response_not_found');
      const reference = await as(token).post('/v1/responses', { ...body, input: [{ type: 'item_reference', id: itemId }] });
      const unknownReference = await as(token).post('/v1/responses', { ...body, input: [{ type: 'item_reference', id: 'msg_nope' }] });
      expectLikeUnknown(reference, unknownReference, itemId, 'msg_nope', 'item_not_found');
      expectEnvelope(await as(token).post('/v1/responses', { ...body, conversation: 'conv_a' }), {
        status: 404,
        type: 'not_found_error',
        code: 'conversation_not_found',
      });
      expect(account.calls.length).toBe(calls);
    }
    expect((await as(tokens.a).get(`/v1/responses/${id}`)).status).toBe(200);
    await createResponse(tokens.a, { previous_response_id: id });
    await createResponse(tokens.a, { input: [{ type: 'item_reference', id: itemId }] });
    await createResponse(tokens.parent, { previous_response_id: id });
    expect((await as(tokens.a).delete(`/v1/responses/${id}`)).status).toBe(200);
  });

  it('the passthrough holds owned resources to the same rule', async () => {
    const fileA = await upload(tokens.a, 'p');
    const response = String((await createResponse(tokens.a))['id']);
    const unknown = await as(tokens.b).get('/p/openai/v1/files/file-nope');
    expectLikeUnknown(await as(tokens.b).get(`/p/openai/v1/files/${fileA}`), unknown, fileA, 'file-nope', 'file_not_found');
    expectLikeUnknown(await as(tokens.b).delete(`/p/openai/v1/files/${fileA}`), unknown, fileA, 'file-nope', 'file_not_found');
    expectEnvelope(await as(tokens.b).get(`/p/openai/v1/responses/${response}`), {
      status: 404,
      type: 'not_found_error',
      code: 'response_not_found',
    });
    for (const path of ['/p/openai/v1/files', '/p/openai/v1/batches', '/p/openai/v1/%66iles']) {
      expectEnvelope(await as(tokens.jwt).get(path), { status: 403, type: 'permission_error', code: 'endpoint_not_allowed' });
    }
    const calls = account.calls.length;
    const continued = await as(tokens.b).post('/p/openai/v1/responses', {
      model: 'gpt-4o-mini',
      input: 'hi',
      previous_response_id: response,
    });
    expectEnvelope(continued, { status: 404, type: 'not_found_error', code: 'response_not_found' });
    expect(account.calls.length).toBe(calls);
    expect((await as(tokens.a).get(`/p/openai/v1/files/${fileA}`)).status).toBe(200);
    expect((await as(tokens.admin).get('/p/openai/v1/files')).status).toBe(200);
    expect(account.files.has(fileA)).toBe(true);
  });

  it('admin keys and the master key see everything, including ids created before ownership was recorded', async () => {
    const fileA = await upload(tokens.a, 'z');
    const legacy = '/v1/files/file-legacy';
    expectLikeUnknown(
      await as(tokens.a).get(legacy),
      await as(tokens.a).get('/v1/files/file-nope'),
      'file-legacy',
      'file-nope',
      'file_not_found',
    );
    for (const token of [tokens.admin, 'test-master-key']) {
      expect((await as(token).get(legacy)).status).toBe(200);
      expect((await as(token).get(`/v1/files/${fileA}`)).status).toBe(200);
      expect(ids(await as(token).get('/v1/files'))).toEqual(expect.arrayContaining(['file-legacy', fileA]));
    }
    const legacyBatch = await createBatch('test-master-key', 'file-legacy');
    await storage.ownership.delete('batch', 'openai', legacyBatch);
    expect((await as(tokens.a).get(`/v1/batches/${legacyBatch}`)).status).toBe(404);
    expect((await as(tokens.admin).get(`/v1/batches/${legacyBatch}`)).status).toBe(200);
  });
});
