import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { bearer, rawRequest } from '../support/http.ts';
import { type MockRequest, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { findRule } from '../support/rate-limits.ts';
import { decodeForm, sendJson } from '../support/upstream.ts';

// Files and batches with the official openai client: relayed to one instance chosen by the
// `provider` hint or the first OpenAI-style instance, ids and bytes untouched; a batch
// submission counts one request on user-path rules only (SEED-SPEC "Limits" 10); file calls
// count nothing.

const batchInput = `${JSON.stringify({ custom_id: 'r1', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [] } })}\n`;

interface StoredFile {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: string;
  owner: string;
}

/** An in-memory Files and Batch API on the mock upstream; `owner` is the key that called. */
function serveFilesAndBatches(mock: MockUpstream): { files: Map<string, { meta: StoredFile; content: Buffer }>; calls: MockRequest[] } {
  const files = new Map<string, { meta: StoredFile; content: Buffer }>();
  const batches = new Map<string, Record<string, unknown>>();
  const calls: MockRequest[] = [];
  const owner = (request: MockRequest): string => String(request.headers.authorization).replace('Bearer ', '');
  const list = (data: unknown[]) => ({ object: 'list', data, first_id: null, last_id: null, has_more: false });
  mock.route('POST', '/files', async (request, response) => {
    calls.push(request);
    const form = await decodeForm(request);
    const file = form.get('file') as File;
    const content = Buffer.from(await file.arrayBuffer());
    const id = `file-${files.size + 1}`;
    const meta: StoredFile = {
      id,
      object: 'file',
      bytes: content.length,
      created_at: 1_700_000_000,
      filename: file.name,
      purpose: String(form.get('purpose')),
      status: 'processed',
      owner: owner(request),
    };
    files.set(id, { meta, content });
    sendJson(response, 200, meta);
  });
  mock.route('GET', '/files', (request, response) => {
    calls.push(request);
    const purpose = new URLSearchParams(request.query).get('purpose');
    sendJson(
      response,
      200,
      list([...files.values()].map((file) => file.meta).filter((meta) => purpose === null || meta.purpose === purpose)),
    );
  });
  mock.route('GET', '/files/*', (request, response) => {
    calls.push(request);
    const [, , id, content] = request.path.split('/');
    const file = files.get(String(id));
    if (file === undefined)
      return sendJson(response, 404, { error: { message: `No such File object: ${id}`, type: 'invalid_request_error', param: 'id' } });
    if (content === 'content') return void response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(file.content);
    sendJson(response, 200, file.meta);
  });
  mock.route('DELETE', '/files/*', (request, response) => {
    calls.push(request);
    const id = request.path.split('/')[2] ?? '';
    files.delete(id);
    sendJson(response, 200, { id, object: 'file', deleted: true });
  });
  mock.route('POST', '/batches', (request, response) => {
    calls.push(request);
    const body = request.body as Record<string, unknown>;
    const batch = {
      id: `batch_${batches.size + 1}`,
      object: 'batch',
      status: 'validating',
      created_at: 1_700_000_000,
      errors: null,
      owner: owner(request),
      ...body,
    };
    batches.set(batch.id, batch);
    sendJson(response, 200, batch);
  });
  mock.route('GET', '/batches', (request, response) => (calls.push(request), sendJson(response, 200, list([...batches.values()]))));
  mock.route('GET', '/batches/*', (request, response) => {
    calls.push(request);
    sendJson(response, 200, batches.get(request.path.split('/')[2] ?? ''));
  });
  mock.route('POST', '/batches/*', (request, response) => {
    calls.push(request);
    const batch = batches.get(request.path.split('/')[2] ?? '') as Record<string, unknown>;
    batch['status'] = 'cancelling';
    sendJson(response, 200, batch);
  });
  return { files, calls };
}

describe('files and batches', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let client: OpenAI;
  let store: ReturnType<typeof serveFilesAndBatches>;

  beforeAll(async () => {
    mock = await startMockUpstream();
    store = serveFilesAndBatches(mock);
    // `mistral` comes first but has no Files API: the default instance is `openai`.
    const configYaml = `
providers:
  mistral:
    type: mistral
    api_key: sk-mistral
    base_url: ${mock.url}
    models: [mistral-small]
  openai:
    type: openai
    api_key: sk-openai
    base_url: ${mock.url}
    models: [gpt-4o-mini]
  backup:
    type: openai-compatible
    api_key: sk-backup
    base_url: ${mock.url}
    models: [gpt-4o-mini]
rate_limits:
  user_paths:
    - path: /batch
      limits: [{ period: minute, max_requests: 2 }, { period: concurrent, max_requests: 1 }]
  providers:
    - name: openai
      limits: [{ period: minute, max_requests: 1 }]
`;
    gateway = await startGateway({ env: { MASTER_KEY }, configYaml });
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  beforeEach(() => {
    store.calls.length = 0;
  });

  it('uploads, lists, retrieves, reads and deletes a file on the default instance', async () => {
    const created = await client.files.create({ file: await toFile(Buffer.from(batchInput), 'input.jsonl'), purpose: 'batch' });
    expect(created).toMatchObject({
      object: 'file',
      filename: 'input.jsonl',
      purpose: 'batch',
      bytes: Buffer.byteLength(batchInput),
      owner: 'sk-openai',
    });
    expect(store.calls[0]?.headers.authorization).toBe('Bearer sk-openai');
    expect(JSON.stringify(store.calls[0]?.headers)).not.toContain(MASTER_KEY);

    const listed = [];
    for await (const file of client.files.list({ purpose: 'batch' })) listed.push(file.id);
    expect(listed).toContain(created.id);
    expect(store.calls.at(-1)?.query).toBe('purpose=batch');

    expect(await client.files.retrieve(created.id)).toMatchObject({ id: created.id, filename: 'input.jsonl' });
    const content = await client.files.content(created.id);
    expect(await content.text()).toBe(batchInput);
    expect(await client.files.delete(created.id)).toEqual({ id: created.id, object: 'file', deleted: true });
    expect(store.files.has(created.id)).toBe(false);
  });

  it('creates, retrieves, lists and cancels a batch', async () => {
    const file = await client.files.create({ file: await toFile(Buffer.from(batchInput), 'in.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { job: 'nightly' },
    });
    expect(batch).toMatchObject({
      object: 'batch',
      status: 'validating',
      input_file_id: file.id,
      completion_window: '24h',
      metadata: { job: 'nightly' },
    });
    expect(store.calls.at(-1)?.body).toEqual({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { job: 'nightly' },
    });
    expect((await client.batches.retrieve(batch.id)).id).toBe(batch.id);
    const ids = [];
    for await (const listed of client.batches.list()) ids.push(listed.id);
    expect(ids).toContain(batch.id);
    expect((await client.batches.cancel(batch.id)).status).toBe('cancelling');
    expect(store.calls.at(-1)?.path).toBe(`/batches/${batch.id}/cancel`);
  });

  it('sends files and batches to the instance the provider hint names, and never forwards the hint', async () => {
    const file = await client.files.create({
      file: await toFile(Buffer.from(batchInput), 'b.jsonl'),
      purpose: 'batch',
      provider: 'backup',
    } as OpenAI.FileCreateParams);
    expect(file).toMatchObject({ owner: 'sk-backup' });
    const upload = await decodeForm(store.calls[0] as MockRequest);
    expect(upload.has('provider')).toBe(false);
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      provider: 'backup',
    } as OpenAI.BatchCreateParams);
    expect(batch).toMatchObject({ owner: 'sk-backup' });
    expect(store.calls.at(-1)?.body).not.toHaveProperty('provider');
    const read = await client.files.retrieve(file.id, { query: { provider: 'backup' } });
    expect(read.id).toBe(file.id);
    expect(store.calls.at(-1)?.headers.authorization).toBe('Bearer sk-backup');
    expect(store.calls.at(-1)?.query).toBe('');
  });

  it('maps upstream errors and refuses an unknown provider hint', async () => {
    const missing = await rejectionOf(client.files.retrieve('file-nope'));
    const error = expectClientError(missing, { status: 404, type: 'not_found_error', provider: 'openai' });
    expect(error.message).toBe('No such File object: file-nope');
    const unknown = await rawRequest(`${gateway.url}/v1/files?provider=nowhere`, { headers: bearer() });
    expectEnvelope(unknown, { status: 400, type: 'invalid_request_error', code: 'unknown_provider', param: 'provider' });
    const unauthenticated = await rawRequest(`${gateway.url}/v1/batches`);
    expectEnvelope(unauthenticated, { status: 401, type: 'authentication_error' });
  });

  it('counts a batch submission once on user-path rules, never on provider rules, and refuses the third with 429', async () => {
    const scoped = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: MASTER_KEY,
      maxRetries: 0,
      defaultHeaders: { 'x-user-path': '/batch' },
    });
    const file = await scoped.files.create({ file: await toFile(Buffer.from(batchInput), 'c.jsonl'), purpose: 'batch' });
    const params = { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' } as const;
    // The provider rule (1 per minute on openai) would refuse the second; it does not apply.
    const first = await scoped.batches.create(params).withResponse();
    expect(first.response.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    await scoped.batches.create(params);
    expect((await findRule(gateway, 'user_path', '/batch', 'minute'))?.requests_used).toBe(2);
    expect((await findRule(gateway, 'user_path', '/batch', 'concurrent'))?.in_flight).toBe(0);
    expect((await findRule(gateway, 'provider', 'openai', 'minute'))?.requests_used).toBe(0);

    const before = store.calls.length;
    const thrown = await rejectionOf(scoped.batches.create(params));
    const error = expectClientError(thrown, { status: 429, type: 'rate_limit_error', provider: 'ratelimit', code: 'rate_limit_exceeded' });
    expect(error.message).toBe('rate limit exceeded for /batch: minute request limit of 2 reached');
    expect(Number((thrown as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(store.calls.length).toBe(before);

    // File calls and batch reads are not rate limited.
    for (let index = 0; index < 3; index += 1) await scoped.files.list().then((page) => page.data);
    await scoped.batches.list().then((page) => page.data);
    expect((await findRule(gateway, 'user_path', '/batch', 'minute'))?.requests_used).toBe(2);
  });
});
