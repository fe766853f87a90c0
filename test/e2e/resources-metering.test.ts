import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import type { UsageRecord } from '../../src/usage/usage-store.ts';
import { adminUsage } from '../support/admin.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, callJson, type RawReply } from '../support/http.ts';
import { type RunsAccount, serveRunsAccount } from '../support/mock-openai-runs.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { backendNames, createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { setTimeout as sleep } from 'node:timers/promises';

// Metering where a model runs behind the owned relay (issue 30 item 3, ADR 40): runs, eval runs,
// fine-tuning jobs, videos and vector-store search count against the caller's limits and budgets
// at admission, and what the provider reports is charged once to the resource's owner.

describe.each(backendNames)('resources metered on %s', (backend) => {
  let mock: MockUpstream;
  let account: RunsAccount;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  const tokens: Record<'a' | 'b' | 'limited' | 'broke' | 'spender', string> = { a: '', b: '', limited: '', broke: '', spender: '' };

  beforeAll(async () => {
    mock = await startMockUpstream();
    account = serveRunsAccount(mock);
    database = await createGatewayDatabase(backend);
    const configYaml = `
providers:
  openai: { type: openai, api_key: sk-openai, base_url: "${mock.url}", models: [gpt-4o-mini] }
usage:
  flush_interval_ms: 20
rate_limits:
  user_paths:
    - path: /limited
      limits: [{ period: minute, max_requests: 2 }]
`;
    gateway = await startGateway({ env: { MASTER_KEY: 'test-master-key', ...database.env }, configYaml, startTimeoutMs: 60_000 });
    storage = await database.open(gateway);
    const key = async (name: string, userPath: string): Promise<string> =>
      String((await callJson(gateway, '/admin/api-keys', 201, { body: { name, user_path: userPath } }))['key']);
    tokens.a = await key('a', '/tenants/a');
    tokens.b = await key('b', '/tenants/b');
    tokens.limited = await key('limited', '/limited/x');
    tokens.broke = await key('broke', '/broke');
    tokens.spender = await key('spender', '/spender');
    for (const [userPath, amount] of [
      ['/broke', 0.0001],
      ['/spender', 1],
    ] as const) {
      const budget = await call(gateway, '/admin/budgets', { method: 'PUT', body: { user_path: userPath, period: 'daily', amount } });
      expect([200, 201], budget.text).toContain(budget.status);
    }
  }, 90_000);

  afterAll(async () => {
    await storage?.close();
    await gateway?.stop();
    await database?.dispose();
    await mock?.close();
  });

  const as = (tenant: keyof typeof tokens, path: string, body?: unknown): Promise<RawReply> =>
    call(gateway, path, { token: tokens[tenant], ...(body === undefined ? {} : { method: 'POST', body }) });
  const created = async (tenant: keyof typeof tokens, path: string, body: unknown = {}): Promise<Record<string, unknown>> => {
    const reply = await as(tenant, path, body);
    expect(reply.status, reply.text).toBe(200);
    return JSON.parse(reply.text) as Record<string, unknown>;
  };
  const requestId = (reply: RawReply): string => String(reply.headers['x-request-id']);
  /** Every usage record of these requests: once `expected` are stored, and a while later (so a second charge would show). */
  const recordsOf = async (replies: readonly RawReply[], expected = 1): Promise<UsageRecord[]> => {
    const read = async () => (await Promise.all(replies.map((reply) => storage.usage.findByRequestId(requestId(reply))))).flat();
    for (let tries = 0; tries < 100 && (await read()).length < expected; tries += 1) await sleep(50);
    await sleep(300);
    return read();
  };
  const usageByModel = (userPath: string) => adminUsage(gateway, { group_by: 'model', user_path: userPath });

  it('a run is charged once to the thread owner when a read shows it finished, however many read it at once', async () => {
    const thread = String((await created('a', '/v1/threads'))['id']);
    const createReply = await as('a', `/v1/threads/${thread}/runs`, {});
    expect(createReply.status, createReply.text).toBe(200);
    const run = String((JSON.parse(createReply.text) as { id: string }).id);
    const queued = await as('a', `/v1/threads/${thread}/runs/${run}`);
    expect(await recordsOf([createReply, queued], 0)).toEqual([]);

    account.finish(`threads/${thread}/runs/${run}`, {
      status: 'completed',
      usage: { prompt_tokens: 2000, completion_tokens: 1000, total_tokens: 3000 },
    });
    const reads = await Promise.all(Array.from({ length: 6 }, () => as('a', `/v1/threads/${thread}/runs/${run}`)));
    for (const reply of reads) expect(reply.status, reply.text).toBe(200);
    const again = [await as('a', `/v1/threads/${thread}/runs`), await as('a', `/v1/threads/${thread}/runs/${run}/cancel`, {})];
    const records = await recordsOf([...reads, ...again]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      userPath: '/tenants/a',
      endpoint: '/v1/threads/runs',
      provider: 'openai',
      model: 'gpt-4o-mini',
      status: 200,
      promptTokens: 2000,
      completionTokens: 1000,
    });
    // gpt-4o-mini: $0.15 and $0.6 per million tokens.
    expect(records[0]?.costUsd).toBeCloseTo(0.0009, 10);
    expect((await usageByModel('/tenants/a')).get('gpt-4o-mini')).toMatchObject({ requests: 1, total_tokens: 3000 });
  });

  it('submit_tool_outputs continues a run: the answer that shows it completed charges it', async () => {
    const thread = String((await created('a', '/v1/threads'))['id']);
    const run = String((await created('a', `/v1/threads/${thread}/runs`, { model: 'gpt-4o-mini' }))['id']);
    const submitted = await as('a', `/v1/threads/${thread}/runs/${run}/submit_tool_outputs`, {
      tool_outputs: [{ tool_call_id: 'c', output: '1' }],
    });
    expect(submitted.status, submitted.text).toBe(200);
    expect(await usageRecordOf(storage, requestId(submitted))).toMatchObject({
      userPath: '/tenants/a',
      promptTokens: 1000,
      completionTokens: 500,
    });
  });

  it('a streamed createAndRun is relayed as it came, its thread is the caller’s, its usage recorded once', async () => {
    const reply = await as('a', '/v1/threads/runs', { stream: true });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers['content-type']).toContain('text/event-stream');
    const events = [...reply.text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
    expect(events).toEqual(['thread.created', 'thread.run.created', 'thread.run.step.completed', 'thread.run.completed', 'done']);
    const thread = String((JSON.parse(/^data: (.+)$/m.exec(reply.text)?.[1] ?? '{}') as { id: string }).id);
    expect((await callJson(gateway, `/v1/threads/${thread}`, 200, { token: tokens.a }))['id']).toBe(thread);
    expectEnvelope(await as('b', `/v1/threads/${thread}`), { status: 404, type: 'not_found_error', code: 'thread_not_found' });
    const record = await usageRecordOf(storage, requestId(reply));
    expect(record).toMatchObject({
      userPath: '/tenants/a',
      endpoint: '/v1/threads/runs',
      stream: true,
      promptTokens: 1000,
      completionTokens: 500,
    });
    // The step's usage is not the run's: one record, the run's tokens, and reads of the run add none.
    await as('a', `/v1/threads/${thread}/runs`);
    expect(await recordsOf([reply])).toHaveLength(1);
    expect((await usageByModel('/tenants/a')).get('gpt-4o-mini')?.requests).toBe(3);
  });

  it('a streamed run on an owned thread is charged to the thread owner', async () => {
    const thread = String((await created('b', '/v1/threads'))['id']);
    const reply = await as('b', `/v1/threads/${thread}/runs`, { stream: true });
    expect(reply.status, reply.text).toBe(200);
    expect(await usageRecordOf(storage, requestId(reply))).toMatchObject({ userPath: '/tenants/b', stream: true, totalTokens: 1500 });
  });

  it('an eval run is charged per model of its per_model_usage, once; an unpriced model costs null', async () => {
    const evaluation = String((await created('a', '/v1/evals', { name: 'e' }))['id']);
    const run = String((await created('a', `/v1/evals/${evaluation}/runs`, { name: 'r' }))['id']);
    account.finish(`evals/${evaluation}/runs/${run}`, {
      status: 'completed',
      per_model_usage: [
        {
          model_name: 'gpt-4o-mini',
          invocation_count: 3,
          prompt_tokens: 1_000_000,
          completion_tokens: 0,
          total_tokens: 1_000_000,
          cached_tokens: 0,
        },
        { model_name: 'house-model', invocation_count: 1, prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cached_tokens: 0 },
      ],
    });
    const reads = await Promise.all([0, 1, 2].map(() => as('a', `/v1/evals/${evaluation}/runs/${run}`)));
    reads.push(await as('a', `/v1/evals/${evaluation}/runs`));
    const records = await recordsOf(reads, 2);
    expect(records.map((record) => [record.endpoint, record.model, record.costUsd]).sort()).toEqual([
      ['/v1/evals/runs', 'gpt-4o-mini', 0.15],
      ['/v1/evals/runs', 'house-model', null],
    ]);
    expect(new Set(records.map((record) => record.requestId)).size).toBe(1);
  });

  it('a fine-tuning job that succeeded is charged its trained tokens once; the spent budget then refuses the next job', async () => {
    const job = String((await created('spender', '/v1/fine_tuning/jobs', { model: 'gpt-4o-mini' }))['id']);
    account.finish(`fine_tuning/jobs/${job}`, {
      status: 'succeeded',
      trained_tokens: 1_000_000,
      fine_tuned_model: `ft:gpt-4o-mini:${job}`,
    });
    const reads = await Promise.all([as('spender', `/v1/fine_tuning/jobs/${job}`), as('spender', `/v1/fine_tuning/jobs/${job}`)]);
    reads.push(await as('spender', '/v1/fine_tuning/jobs'));
    const records = await recordsOf(reads);
    expect(records).toHaveLength(1);
    // gpt-4o-mini training: $3 per million tokens.
    expect(records[0]).toMatchObject({
      userPath: '/spender',
      endpoint: '/v1/fine_tuning/jobs',
      model: 'gpt-4o-mini',
      costUsd: 3,
      totalTokens: 1_000_000,
    });
    const before = account.calls.length;
    const refused = await as('spender', '/v1/fine_tuning/jobs', { model: 'gpt-4o-mini' });
    expectEnvelope(refused, { status: 429, type: 'rate_limit_error', code: 'budget_exceeded', provider: 'budget' });
    expect(account.calls.length).toBe(before);
  });

  it('a completed video is charged its seconds at the model’s price per second, once', async () => {
    const video = String((await created('a', '/v1/videos', { model: 'sora-2', prompt: 'a cat', seconds: '8', size: '1280x720' }))['id']);
    account.finish(`videos/${video}`, { status: 'completed' });
    const reads = await Promise.all([as('a', `/v1/videos/${video}`), as('a', `/v1/videos/${video}`), as('a', '/v1/videos')]);
    const records = await recordsOf(reads);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ endpoint: '/v1/videos', model: 'sora-2', usage: { seconds: 8, size: '1280x720' } });
    expect(records[0]?.costUsd).toBeCloseTo(0.8, 10);
  });

  it('reading what a model made without reading the run charges the run once: messages, steps, video content, job events', async () => {
    const thread = String((await created('b', '/v1/threads'))['id']);
    const run = String((await created('b', `/v1/threads/${thread}/runs`, {}))['id']);
    const message = String((await created('b', `/v1/threads/${thread}/messages`, { role: 'user', content: 'hi' }))['id']);
    account.finish(`threads/${thread}/messages/${message}`, { run_id: run });
    const early = await as('b', `/v1/threads/${thread}/messages`);
    account.finish(`threads/${thread}/runs/${run}`, {
      status: 'completed',
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
    });
    const reads = await Promise.all([0, 1, 2].map(() => as('b', `/v1/threads/${thread}/messages`)));
    reads.push(await as('b', `/v1/threads/${thread}/messages/${message}`), await as('b', `/v1/threads/${thread}/runs/${run}/steps`));
    for (const reply of [early, ...reads]) expect(reply.status, reply.text).toBe(200);
    const runRecords = await recordsOf([early, ...reads]);
    expect(runRecords.map((record) => [record.userPath, record.endpoint, record.totalTokens])).toEqual([
      ['/tenants/b', '/v1/threads/runs', 10],
    ]);

    const video = String((await created('b', '/v1/videos', { model: 'sora-2', prompt: 'p', seconds: '4' }))['id']);
    account.finish(`videos/${video}`, { status: 'completed' });
    const job = String((await created('b', '/v1/fine_tuning/jobs', { model: 'gpt-4o-mini' }))['id']);
    account.finish(`fine_tuning/jobs/${job}`, { status: 'succeeded', trained_tokens: 1000 });
    const outputs = await Promise.all([
      as('b', `/v1/videos/${video}/content`),
      as('b', `/v1/videos/${video}/content`),
      as('b', `/v1/fine_tuning/jobs/${job}/events`),
      as('b', `/v1/fine_tuning/jobs/${job}/checkpoints`),
    ]);
    const outputRecords = await recordsOf(outputs, 2);
    expect(outputRecords.map((record) => [record.endpoint, record.model]).sort()).toEqual([
      ['/v1/fine_tuning/jobs', 'gpt-4o-mini'],
      ['/v1/videos', 'sora-2'],
    ]);
    expect(await recordsOf([await as('b', `/v1/videos/${video}`), await as('b', `/v1/fine_tuning/jobs/${job}`)], 0)).toEqual([]);
  });

  it('a vector-store search is one call at cost 0, every time', async () => {
    const store = String((await created('a', '/v1/vector_stores', { name: 's' }))['id']);
    const searches = [
      await as('a', `/v1/vector_stores/${store}/search`, { query: 'q' }),
      await as('a', `/v1/vector_stores/${store}/search`, { query: 'q' }),
    ];
    for (const reply of searches) expect(reply.status, reply.text).toBe(200);
    const records = await recordsOf(searches, 2);
    expect(records.map((record) => [record.endpoint, record.model, record.costUsd, record.userPath])).toEqual([
      ['/v1/vector_stores/search', 'vector_store_search', 0, '/tenants/a'],
      ['/v1/vector_stores/search', 'vector_store_search', 0, '/tenants/a'],
    ]);
  });

  it('a spent budget refuses every metered route before the upstream is called; unmetered routes go on', async () => {
    // One streamed run ($0.00045) spends the whole $0.0001.
    const spent = await as('broke', '/v1/threads/runs', { stream: true });
    expect(spent.status, spent.text).toBe(200);
    await usageRecordOf(storage, requestId(spent));
    const thread = String((await created('broke', '/v1/threads'))['id']);
    const store = String((await created('broke', '/v1/vector_stores'))['id']);
    const evaluation = String((await created('broke', '/v1/evals'))['id']);
    const before = account.calls.length;
    for (const [path, body] of [
      ['/v1/threads/runs', {}],
      [`/v1/threads/${thread}/runs`, { stream: true }],
      [`/v1/threads/${thread}/runs/run_x/submit_tool_outputs`, { tool_outputs: [] }],
      [`/v1/evals/${evaluation}/runs`, {}],
      ['/v1/fine_tuning/jobs', { model: 'gpt-4o-mini' }],
      ['/v1/videos', { model: 'sora-2', prompt: 'p' }],
      [`/v1/vector_stores/${store}/search`, { query: 'q' }],
    ] as const) {
      expectEnvelope(await as('broke', path, body), { status: 429, type: 'rate_limit_error', code: 'budget_exceeded', provider: 'budget' });
    }
    expect(account.calls.length).toBe(before);
  });

  it('a rate limit of 2 requests a minute admits two runs, with rate-limit headers, and refuses the third', async () => {
    const replies: RawReply[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1) replies.push(await as('limited', '/v1/threads/runs', {}));
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 429]);
    expect(replies.slice(0, 2).map((reply) => reply.headers['x-ratelimit-remaining-requests'])).toEqual(['1', '0']);
    expectEnvelope(replies[2] as RawReply, { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', provider: 'ratelimit' });
  });
});
