import Anthropic, { toFile } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { spentOf } from '../support/admin.ts';
import { anthropicClient, expectSdkError, rejectionOf } from '../support/clients.ts';
import { expectAnthropicEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { call, callJson, type RawReply } from '../support/http.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type AnthropicAccount, serveAnthropicAccount } from '../support/mock-anthropic-resources.ts';

// Anthropic's Message Batches and Files through the gateway with the official SDK (ADR 41):
// relayed to the Anthropic instance, owned per tenant (another tenant's id answers exactly like
// an unknown one, nothing reaches the upstream), listings from the owner store in Anthropic's
// paging shape, batch models checked against the key's allowlist, a create admitted against
// the budget, an ended batch charged once to its owner from its results.

const upstreamKey = 'sk-ant-upstream';
const model = 'claude-sonnet-4-5';
const filesBeta = 'files-api-2025-04-14';

const batchRequest = (name = model): Anthropic.Messages.BatchCreateParams.Request => ({
  custom_id: 'r0',
  params: { model: name, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
});

describe('Anthropic message batches and files through the gateway', () => {
  let mock: MockAnthropic;
  let account: AnthropicAccount;
  let gateway: GatewayProcess;
  const keys: Record<'a' | 'b' | 'c' | 'narrow' | 'admin', string> = { a: '', b: '', c: '', narrow: '', admin: '' };

  beforeAll(async () => {
    mock = await startMockAnthropic();
    account = serveAnthropicAccount(mock, upstreamKey);
    // Every result line of claude-sonnet-4-5 (1000 in, 500 out) costs $2 here.
    const configYaml = `
providers:
  claude:
    type: anthropic
    api_key: ${upstreamKey}
    base_url: ${mock.url}
    models: [${model}, claude-haiku-4-5]
pricing:
  ${model}: { input_per_mtok: 1000, output_per_mtok: 2000 }
budgets:
  user_paths:
    - path: /tenants/a
      limits: [{ period: daily, amount: 3 }]
`;
    gateway = await startGateway({ env: { MASTER_KEY }, configYaml });
    const create = async (name: string, userPath: string, extra: Record<string, unknown> = {}): Promise<string> =>
      (await callJson(gateway, '/admin/api-keys', 201, { token: MASTER_KEY, body: { name, user_path: userPath, ...extra } }))[
        'key'
      ] as string;
    keys.a = await create('tenant-a', '/tenants/a');
    keys.b = await create('tenant-b', '/tenants/b');
    keys.c = await create('tenant-c', '/tenants/c');
    keys.narrow = await create('narrow', '/tenants/narrow', { allowed_models: ['claude/claude-haiku-4-5'] });
    keys.admin = await create('ops', '/ops', { role: 'admin' });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  const client = (tenant: keyof typeof keys): Anthropic => anthropicClient(gateway, keys[tenant]);
  const raw = (tenant: keyof typeof keys, path: string, method: 'GET' | 'POST' | 'DELETE' = 'GET', body?: unknown): Promise<RawReply> =>
    call(gateway, path, {
      token: keys[tenant],
      method,
      headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': filesBeta },
      ...(body === undefined ? {} : { body }),
    });
  /** B's answer for A's id is the answer for an unknown id (the id aside), and nothing reaches the upstream. */
  const expectHidden = async (hidden: () => Promise<RawReply>, unknown: () => Promise<RawReply>, id: string): Promise<void> => {
    const before = account.calls.length;
    const theirs = await hidden();
    expectAnthropicEnvelope(theirs, 404, 'not_found_error');
    expect(account.calls.length).toBe(before);
    const other = await unknown();
    expect(theirs.text.replace(id, 'ID')).toBe(other.text.replace(/(msgbatch|file)_unknown/, 'ID'));
  };

  it('message batches: create, retrieve, list, cancel, results and delete with the SDK; B sees none of A’s', async () => {
    const created = await client('a').messages.batches.create({ requests: [batchRequest()] });
    expect(created.id).toMatch(/^msgbatch_/);
    expect(account.calls.at(-1)?.headers['x-api-key']).toBe(upstreamKey);
    const theirs = await client('b').messages.batches.create({ requests: [batchRequest()] });
    expect((await client('a').messages.batches.retrieve(created.id)).processing_status).toBe('in_progress');

    const pageA = await client('a').messages.batches.list();
    expect(pageA.data.map((batch) => batch.id)).toEqual([created.id]);
    expect(pageA.has_more).toBe(false);
    expect(pageA.first_id).toBe(created.id);
    const pageB = await client('b').messages.batches.list({ limit: 5 });
    expect(pageB.data.map((batch) => batch.id)).toEqual([theirs.id]);
    const all = await client('admin').messages.batches.list();
    expect(all.data.map((batch) => batch.id)).toEqual(expect.arrayContaining([created.id, theirs.id]));

    const id = created.id;
    await expectHidden(
      () => raw('b', `/v1/messages/batches/${id}`),
      () => raw('b', '/v1/messages/batches/msgbatch_unknown'),
      id,
    );
    await expectHidden(
      () => raw('b', `/v1/messages/batches/${id}/cancel`, 'POST'),
      () => raw('b', '/v1/messages/batches/msgbatch_unknown/cancel', 'POST'),
      id,
    );
    await expectHidden(
      () => raw('b', `/v1/messages/batches/${id}/results`),
      () => raw('b', '/v1/messages/batches/msgbatch_unknown/results'),
      id,
    );
    await expectHidden(
      () => raw('b', `/v1/messages/batches/${id}`, 'DELETE'),
      () => raw('b', '/v1/messages/batches/msgbatch_unknown', 'DELETE'),
      id,
    );
    expectSdkError(await rejectionOf(client('b').messages.batches.retrieve(id)), Anthropic.NotFoundError, 404, 'not_found_error');
    // The passthrough reaches the same account: the same owner rule there.
    expect((await raw('a', `/p/claude/v1/messages/batches/${id}`)).status).toBe(200);
    const before = account.calls.length;
    expect((await raw('b', `/p/claude/v1/messages/batches/${id}`)).status).toBe(404);
    expect(account.calls.length).toBe(before);

    account.end(id, [{ model, input_tokens: 10, output_tokens: 5 }]);
    const ended = await client('a').messages.batches.retrieve(id);
    // The SDK reads results from `results_url`: it must point at the gateway, not at the upstream.
    expect(ended.results_url).toBe(`${gateway.url}/v1/messages/batches/${id}/results`);
    const lines: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const line of await client('a').messages.batches.results(id)) lines.push(line);
    expect(lines.map((line) => line.result.type)).toEqual(['succeeded']);

    expect((await client('b').messages.batches.cancel(theirs.id)).processing_status).toBe('canceling');
    expect((await client('a').messages.batches.delete(id)).type).toBe('message_batch_deleted');
    expectSdkError(await rejectionOf(client('a').messages.batches.retrieve(id)), Anthropic.NotFoundError, 404, 'not_found_error');
  });

  it('message batches: every request’s model passes the key’s allowlist before anything is sent', async () => {
    const before = account.batches.size;
    const refused = await rejectionOf(
      client('narrow').messages.batches.create({ requests: [batchRequest('claude-haiku-4-5'), batchRequest(model)] }),
    );
    expect(expectSdkError(refused, Anthropic.PermissionDeniedError, 403, 'permission_error').message).toContain(`claude/${model}`);
    expect(account.batches.size).toBe(before);
    const allowed = await client('narrow').messages.batches.create({ requests: [batchRequest('claude-haiku-4-5')] });
    expect(allowed.id).toMatch(/^msgbatch_/);
  });

  it('message batches: an ended batch is charged once to its owner; then the spent budget refuses the next create', async () => {
    const spentBefore = await spentOf(gateway, '/tenants/a');
    expect(spentBefore).toBeLessThan(1);
    const created = await client('a').messages.batches.create({ requests: [batchRequest(), batchRequest()] });
    account.end(created.id, [
      { model, input_tokens: 1000, output_tokens: 500 },
      { model, input_tokens: 1000, output_tokens: 500 },
    ]);
    // B reading it charges nothing (B never sees it); A's list and retrieve charge it once.
    expect((await raw('b', `/v1/messages/batches/${created.id}`)).status).toBe(404);
    expect((await client('a').messages.batches.list()).data.map((batch) => batch.id)).toContain(created.id);
    await client('a').messages.batches.retrieve(created.id);
    await client('a').messages.batches.retrieve(created.id);
    await expect.poll(() => spentOf(gateway, '/tenants/a')).toBeCloseTo(spentBefore + 4, 6);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await spentOf(gateway, '/tenants/a')).toBeCloseTo(spentBefore + 4, 6);
    const before = account.batches.size;
    const refused = await rejectionOf(client('a').messages.batches.create({ requests: [batchRequest()] }));
    expectSdkError(refused, Anthropic.RateLimitError, 429, 'rate_limit_error');
    expect(account.batches.size).toBe(before);
  });

  it('files: upload, list, metadata, download and delete with the SDK’s beta files; B reaches none of C’s', async () => {
    const uploaded = await client('c').beta.files.upload({
      file: await toFile(Buffer.from('hello from a'), 'a.txt', { type: 'text/plain' }),
    });
    expect(uploaded.id).toMatch(/^file_/);
    expect(account.calls.at(-1)?.headers['anthropic-beta']).toContain(filesBeta);
    const theirs = await client('b').beta.files.upload({ file: await toFile(Buffer.from('from b'), 'b.txt', { type: 'text/plain' }) });

    const listed = await client('c').beta.files.list();
    expect(listed.data.map((file) => file.id)).toEqual([uploaded.id]);
    expect((await client('b').beta.files.list()).data.map((file) => file.id)).toEqual([theirs.id]);
    expect((await client('c').beta.files.retrieveMetadata(uploaded.id)).filename).toBe('a.txt');
    expect(await (await client('c').beta.files.download(uploaded.id)).text()).toBe('hello from a');

    const id = uploaded.id;
    await expectHidden(
      () => raw('b', `/v1/files/${id}`),
      () => raw('b', '/v1/files/file_unknown'),
      id,
    );
    await expectHidden(
      () => raw('b', `/v1/files/${id}/content`),
      () => raw('b', '/v1/files/file_unknown/content'),
      id,
    );
    await expectHidden(
      () => raw('b', `/v1/files/${id}`, 'DELETE'),
      () => raw('b', '/v1/files/file_unknown', 'DELETE'),
      id,
    );
    expectSdkError(await rejectionOf(client('b').beta.files.retrieveMetadata(id)), Anthropic.NotFoundError, 404, 'not_found_error');

    // A message naming C's file: C's goes upstream, B's is refused before the upstream call.
    const document = (fileId: string) => ({
      model,
      max_tokens: 16,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'file', file_id: fileId } },
            { type: 'text', text: 'sum up' },
          ],
        },
      ],
    });
    expect((await raw('c', '/v1/messages', 'POST', document(id))).status).toBe(200);
    const before = mock.requests.length;
    const refused = await raw('b', '/v1/messages', 'POST', document(id));
    expect(expectAnthropicEnvelope(refused, 404, 'not_found_error').error.message).toContain(id);
    expect(mock.requests.length).toBe(before);
    const toolResult = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: document(id).messages[0]?.content }] };
    expect((await raw('b', '/v1/messages', 'POST', { ...document(theirs.id), messages: [toolResult] })).status).toBe(404);

    expect((await client('c').beta.files.delete(id)).type).toBe('file_deleted');
    expectSdkError(await rejectionOf(client('c').beta.files.retrieveMetadata(id)), Anthropic.NotFoundError, 404, 'not_found_error');
  });

  it('OpenAI’s /v1/files is unchanged without anthropic-version (no Anthropic instance is asked)', async () => {
    const before = account.calls.length;
    const reply = await call(gateway, '/v1/files', { token: keys.a });
    expect(reply.status).not.toBe(200);
    expect(account.calls.length).toBe(before);
  });
});
