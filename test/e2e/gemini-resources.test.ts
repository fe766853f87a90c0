import type { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { usageOf } from '../support/admin.ts';
import { expectApiError, geminiClient, rejectionOf } from '../support/clients.ts';
import { expectGoogleEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { call, callJson, type RawReply } from '../support/http.ts';
import { type MockGeminiAccount, startMockGeminiAccount } from '../support/mock-gemini-resources.ts';

// Gemini's Files API and cached contents through the gateway with @google/genai (ADR 41):
// resumable uploads through the gateway, names owned per tenant (another tenant's name answers
// exactly like an unknown one, in Google's envelope, and nothing reaches the upstream), listings
// from the owner store, a cache's model checked against the allowlist, its create admitted
// against the budget and its stored tokens recorded, a generateContent naming another tenant's
// cache refused.

const upstreamKey = 'gemini-upstream-key';
const model = 'gemini-2.5-flash';

describe('Gemini files and cached contents through the gateway', () => {
  let mock: MockGeminiAccount;
  let gateway: GatewayProcess;
  const keys: Record<'a' | 'b' | 'narrow' | 'poor' | 'admin', string> = { a: '', b: '', narrow: '', poor: '', admin: '' };

  beforeAll(async () => {
    mock = await startMockGeminiAccount(upstreamKey);
    // Every generateContent answer (5 tokens) costs $5 here: the poor path's budget is spent by one.
    const configYaml = `
providers:
  google:
    type: gemini
    api_key: ${upstreamKey}
    base_url: ${mock.url}
    models: [${model}, gemini-2.5-pro]
pricing:
  ${model}: { input_per_mtok: 1000000, output_per_mtok: 1000000 }
budgets:
  user_paths:
    - path: /tenants/poor
      limits: [{ period: daily, amount: 1 }]
`;
    gateway = await startGateway({ env: { MASTER_KEY }, configYaml });
    const create = async (name: string, userPath: string, extra: Record<string, unknown> = {}): Promise<string> =>
      (await callJson(gateway, '/admin/api-keys', 201, { token: MASTER_KEY, body: { name, user_path: userPath, ...extra } }))[
        'key'
      ] as string;
    keys.a = await create('tenant-a', '/tenants/a');
    keys.b = await create('tenant-b', '/tenants/b');
    keys.narrow = await create('narrow', '/tenants/narrow', { allowed_models: ['google/gemini-2.5-pro'] });
    keys.poor = await create('poor', '/tenants/poor');
    keys.admin = await create('ops', '/ops', { role: 'admin' });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  const client = (tenant: keyof typeof keys): GoogleGenAI => geminiClient(gateway, keys[tenant]);
  const raw = (
    tenant: keyof typeof keys,
    path: string,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE' = 'GET',
    body?: unknown,
  ): Promise<RawReply> =>
    call(gateway, path, { method, token: null, headers: { 'x-goog-api-key': keys[tenant] }, ...(body === undefined ? {} : { body }) });
  /** B's answer for A's name is the answer for an unknown name (the name aside), and nothing reaches the upstream. */
  const expectHidden = async (hidden: () => Promise<RawReply>, unknown: () => Promise<RawReply>, id: string): Promise<void> => {
    const before = mock.calls.length;
    const theirs = await hidden();
    expectGoogleEnvelope(theirs, 404, 'NOT_FOUND');
    expect(mock.calls.length).toBe(before);
    const other = await unknown();
    expect(theirs.text.replaceAll(id, 'ID')).toBe(other.text.replaceAll('unknown1', 'ID'));
  };
  const upload = async (tenant: keyof typeof keys, text: string): Promise<string> => {
    const file = await client(tenant).files.upload({
      file: new Blob([text], { type: 'text/plain' }),
      config: { displayName: `${tenant}.txt` },
    });
    return String(file.name);
  };

  it('files: a resumable upload goes through the gateway; list, get and delete; B reaches none of A’s', async () => {
    const name = await upload('a', 'hello from a');
    expect(name).toMatch(/^files\//);
    // Both legs of the upload went upstream with the instance's key; the SDK never saw the upstream's URL.
    const legs = mock.calls.filter((leg) => leg.path === '/upload/v1beta/files');
    expect(legs.map((leg) => leg.query.has('upload_id'))).toEqual([false, true]);
    expect(mock.files.get(name)?.content).toBe('hello from a');
    const theirs = await upload('b', 'from b');

    const listed: string[] = [];
    for await (const file of await client('a').files.list()) listed.push(String(file.name));
    expect(listed).toEqual([name]);
    const listedB: string[] = [];
    for await (const file of await client('b').files.list()) listedB.push(String(file.name));
    expect(listedB).toEqual([theirs]);
    expect((await client('a').files.get({ name })).displayName).toBe('a.txt');

    const id = name.slice('files/'.length);
    await expectHidden(
      () => raw('b', `/v1beta/${name}`),
      () => raw('b', '/v1beta/files/unknown1'),
      id,
    );
    await expectHidden(
      () => raw('b', `/v1beta/${name}`, 'DELETE'),
      () => raw('b', '/v1beta/files/unknown1', 'DELETE'),
      id,
    );
    expectApiError(await rejectionOf(client('b').files.get({ name })), 404, 'NOT_FOUND');
    // B cannot continue A's upload session either.
    const session = mock.calls.find((leg) => leg.query.has('upload_id'))?.query.get('upload_id') ?? '';
    const before = mock.calls.length;
    const hijack = await raw('b', `/upload/v1beta/files?upload_id=${session}&upload_protocol=resumable`, 'POST', 'x');
    expectGoogleEnvelope(hijack, 404, 'NOT_FOUND');
    expect(mock.calls.length).toBe(before);

    await client('a').files.delete({ name });
    expectApiError(await rejectionOf(client('a').files.get({ name })), 404, 'NOT_FOUND');
  });

  it('cached contents: create (metered), list, get, update and delete; B reaches none of A’s nor names it', async () => {
    const cache = await client('a').caches.create({
      model,
      config: { displayName: 'a', contents: [{ role: 'user', parts: [{ text: 'long context' }] }] },
    });
    const name = String(cache.name);
    expect(name).toMatch(/^cachedContents\//);
    const usage = await usageOf(gateway, '/tenants/a');
    expect(usage).toMatchObject({ requests: 1, prompt_tokens: 2048, cost_usd: null, unpriced_requests: 1 });
    const theirs = await client('b').caches.create({ model, config: { displayName: 'b' } });

    const listed: string[] = [];
    for await (const item of await client('a').caches.list()) listed.push(String(item.name));
    expect(listed).toEqual([name]);
    expect((await client('a').caches.get({ name })).displayName).toBe('a');
    expect((await client('a').caches.update({ name, config: { ttl: '600s' } })).name).toBe(name);

    const id = name.slice('cachedContents/'.length);
    await expectHidden(
      () => raw('b', `/v1beta/${name}`),
      () => raw('b', '/v1beta/cachedContents/unknown1'),
      id,
    );
    await expectHidden(
      () => raw('b', `/v1beta/${name}`, 'PATCH', { ttl: '1s' }),
      () => raw('b', '/v1beta/cachedContents/unknown1', 'PATCH', { ttl: '1s' }),
      id,
    );
    await expectHidden(
      () => raw('b', `/v1beta/${name}`, 'DELETE'),
      () => raw('b', '/v1beta/cachedContents/unknown1', 'DELETE'),
      id,
    );

    // generateContent naming A's cache: B is refused before any upstream call, A is not.
    const before = mock.calls.length;
    expectApiError(
      await rejectionOf(client('b').models.generateContent({ model, contents: 'hi', config: { cachedContent: name } })),
      404,
      'NOT_FOUND',
    );
    expect(mock.calls.length).toBe(before);
    expect((await client('a').models.generateContent({ model, contents: 'hi', config: { cachedContent: name } })).text).toBe(
      'cached answer',
    );

    // A cache naming A's file is B's to make only with B's own file.
    const fileName = await upload('a', 'context file');
    const withFile = {
      model: `models/${model}`,
      contents: [{ role: 'user', parts: [{ fileData: { fileUri: `https://x/v1beta/${fileName}`, mimeType: 'text/plain' } }] }],
    };
    const refused = await raw('b', '/v1beta/cachedContents', 'POST', withFile);
    expectGoogleEnvelope(refused, 404, 'NOT_FOUND');
    expect((await raw('a', '/v1beta/cachedContents', 'POST', withFile)).status).toBe(200);

    await client('b').caches.delete({ name: String(theirs.name) });
    expectApiError(await rejectionOf(client('b').caches.get({ name: String(theirs.name) })), 404, 'NOT_FOUND');
  });

  it('cached contents: the model passes the allowlist; a spent budget refuses the create', async () => {
    const count = mock.caches.size;
    expectApiError(await rejectionOf(client('narrow').caches.create({ model, config: {} })), 403, 'PERMISSION_DENIED');
    expect(mock.caches.size).toBe(count);
    expect((await client('narrow').caches.create({ model: 'gemini-2.5-pro', config: {} })).name).toMatch(/^cachedContents\//);

    await client('poor').models.generateContent({ model, contents: 'spend it' });
    const before = mock.caches.size;
    expectApiError(await rejectionOf(client('poor').caches.create({ model, config: {} })), 429, 'RESOURCE_EXHAUSTED');
    expect(mock.caches.size).toBe(before);
  });

  it('an admin key lists every tenant’s files from the upstream', async () => {
    const name = await upload('b', 'listed');
    const reply = await raw('admin', '/v1beta/files');
    expect(reply.status).toBe(200);
    expect((JSON.parse(reply.text) as { files: { name: string }[] }).files.map((file) => file.name)).toContain(name);
  });
});
