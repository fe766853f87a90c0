import { setTimeout as sleep } from 'node:timers/promises';

import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { adminUsage } from '../support/admin.ts';
import { openAIClient } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, callJson, chatBody, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { backendNames, createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';

// CONTRACT section 7: one usage record per executed request (streams included), written in
// batches, on SQLite and on PostgreSQL.

/** `mock-model` costs exactly $1 per mock answer (12 prompt, 5 completion tokens). */
const pricingYaml = 'pricing:\n  mock-model: { input_per_mtok: 25000, output_per_mtok: 140000 }\n';
/** gpt-4o-mini from the built-in table: 12 * $0.15 + 5 * $0.60 per million tokens. */
const gpt4oMiniCost = (12 * 0.15 + 5 * 0.6) / 1e6;
const messages = [{ role: 'user' as const, content: 'Say hello' }];

function usageGatewayEnv(mock: MockUpstream, database: GatewayDatabase, extra: Record<string, string> = {}): Record<string, string> {
  return gatewayEnv(mock, { OPENAI_MODELS: 'gpt-4o-mini,mock-model,free-model,error-500', ...database.env, ...extra });
}

describe.each(backendNames)('usage records on %s', (backendName) => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createGatewayDatabase(backendName);
    gateway = await startGateway({ env: usageGatewayEnv(mock, database), configYaml: pricingYaml });
    storage = await database.open(gateway);
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await mock?.close();
  });

  /** A non-streaming chat through the openai client; returns the response's X-Request-ID. */
  async function chat(model: string, userPath: string, target: OpenAI = client): Promise<string> {
    const { data, response } = await target.chat.completions
      .create({ model, messages }, { headers: { 'X-User-Path': userPath } })
      .withResponse();
    expect(data.usage?.total_tokens).toBe(17);
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    return requestId as string;
  }

  /** A streamed chat read to the end; returns the request id and whether a usage chunk came. */
  async function streamChat(model: string, userPath: string, includeUsage: boolean): Promise<{ requestId: string; sawUsage: boolean }> {
    const { data: stream, response } = await client.chat.completions
      .create(
        { model, messages, stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) },
        { headers: { 'X-User-Path': userPath } },
      )
      .withResponse();
    let sawUsage = false;
    for await (const chunk of stream) if (chunk.usage) sawUsage = true;
    return { requestId: response.headers.get('x-request-id') ?? '', sawUsage };
  }

  it('records a non-streaming request: id, user path, endpoint, provider, bare model, tokens, cost, status, latency', async () => {
    const before = Date.now();
    const requestId = await chat('openai/gpt-4o-mini', '/records/json');
    const record = await usageRecordOf(storage, requestId);
    expect(record).toMatchObject({
      requestId,
      userPath: '/records/json',
      apiKeyId: null,
      endpoint: '/v1/chat/completions',
      provider: 'openai',
      model: 'gpt-4o-mini',
      promptTokens: 12,
      completionTokens: 5,
      totalTokens: 17,
      status: 200,
      stream: false,
      cacheHit: false,
    });
    expect(record.costUsd).toBeCloseTo(gpt4oMiniCost, 12);
    expect(record.latencyMs).toBeGreaterThan(0);
    expect(record.timestamp).toBeGreaterThanOrEqual(before - 5);
    expect(record.timestamp).toBeLessThanOrEqual(Date.now() + 5);
    expect(record.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
  });

  it('keeps the caller-supplied X-Request-ID as the record request id', async () => {
    const requestId = `usage-${backendName}-${Date.now()}`;
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'x-request-id': requestId, 'x-user-path': 'records//given/' },
      body: chatBody('mock-model'),
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.headers['x-request-id']).toBe(requestId);
    const record = await usageRecordOf(storage, requestId);
    expect(record).toMatchObject({ requestId, userPath: '/records/given', provider: 'openai', model: 'mock-model', costUsd: 1 });
  });

  it.each([true, false])('records a stream (include_usage %s) with the upstream token counts and cost', async (includeUsage) => {
    const { requestId, sawUsage } = await streamChat('openai/mock-model', '/records/stream', includeUsage);
    expect(sawUsage).toBe(includeUsage);
    const record = await usageRecordOf(storage, requestId);
    expect(record).toMatchObject({
      requestId,
      userPath: '/records/stream',
      endpoint: '/v1/chat/completions',
      provider: 'openai',
      model: 'mock-model',
      promptTokens: 12,
      completionTokens: 5,
      totalTokens: 17,
      costUsd: 1,
      status: 200,
      stream: true,
    });
    expect(record.latencyMs).toBeGreaterThan(0);
  });

  it('stores cost null for a model without a price; GET /admin/usage then reports a null cost and the unpriced count', async () => {
    const freeId = await chat('free-model', '/price/free');
    const paidId = await chat('mock-model', '/price/paid');
    const free = await usageRecordOf(storage, freeId);
    expect(free).toMatchObject({ model: 'free-model', promptTokens: 12, completionTokens: 5, totalTokens: 17, costUsd: null });
    expect((await usageRecordOf(storage, paidId)).costUsd).toBe(1);
    const rows = await adminUsage(gateway, { user_path: '/price', group_by: 'user_path' });
    expect(rows.get('/price/free')).toEqual({
      key: '/price/free',
      requests: 1,
      prompt_tokens: 12,
      completion_tokens: 5,
      total_tokens: 17,
      cost_usd: null,
      unpriced_requests: 1,
    });
    expect(rows.get('/price/paid')).toMatchObject({ cost_usd: 1, unpriced_requests: 0 });
    // One unpriced record in a group makes its cost unknown: never a partial sum shown as the whole.
    const bothTotal = await adminUsage(gateway, { user_path: '/price', group_by: 'day' });
    expect([...bothTotal.values()].map((row) => [row.cost_usd, row.unpriced_requests])).toEqual([[null, 1]]);
    const series = await callJson(gateway, '/admin/usage?user_path=/price&group_by=model&bucket=hour', 200);
    expect(
      (series['rows'] as Array<Record<string, unknown>>).map((row) => [row['key'], row['cost_usd'], row['unpriced_requests']]),
    ).toEqual([
      ['free-model', null, 1],
      ['mock-model', 1, 0],
    ]);
    const own = await callJson(gateway, '/v1/usage', 200, { headers: { 'x-user-path': '/price/free' } });
    expect(own['usage']).toMatchObject({ requests: 1, cost_usd: null, unpriced_requests: 1 });
  });

  it('records an upstream 500 with its status and zero tokens', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'x-user-path': '/records/failed' },
      body: chatBody('openai/error-500'),
    });
    expectEnvelope(reply, { status: 500, type: 'provider_error', provider: 'openai' });
    const record = await usageRecordOf(storage, String(reply.headers['x-request-id']));
    expect(record).toMatchObject({
      userPath: '/records/failed',
      provider: 'openai',
      model: 'error-500',
      status: 500,
      promptTokens: 0,
      completionTokens: 0,
      totalTokens: 0,
      stream: false,
    });
    expect(record.costUsd === null || record.costUsd === 0).toBe(true);
  });

  it('records the managed API key that made the request', async () => {
    const created = await callJson(gateway, '/admin/api-keys', 201, { body: { name: `usage-${backendName}` } });
    const keyClient = openAIClient(gateway, created['key'] as string);
    const requestId = await chat('mock-model', '/records/key', keyClient);
    const record = await usageRecordOf(storage, requestId);
    expect(record.apiKeyId).toBe(created['id']);
    expect(record.userPath).toBe('/records/key');
  });

  it('keeps the records across a restart on the same database', async () => {
    const requestId = await chat('mock-model', '/restart/before');
    await usageRecordOf(storage, requestId);
    const rowsBefore = await adminUsage(gateway, { group_by: 'user_path' });
    expect(await gateway.stop()).toBe(0);
    gateway = await startGateway({ env: usageGatewayEnv(mock, database), configYaml: pricingYaml, cwd: gateway.cwd });
    client = openAIClient(gateway);
    expect(await adminUsage(gateway, { group_by: 'user_path' })).toEqual(rowsBefore);
    expect(rowsBefore.get('/restart/before')?.requests).toBe(1);
    const afterId = await chat('mock-model', '/restart/after');
    expect((await usageRecordOf(storage, afterId)).userPath).toBe('/restart/after');
    expect((await usageRecordOf(storage, requestId)).userPath).toBe('/restart/before');
  });
});

describe.each(backendNames)('USAGE_ENABLED=false on %s', (backendName) => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createGatewayDatabase(backendName);
    gateway = await startGateway({ env: usageGatewayEnv(mock, database, { USAGE_ENABLED: 'false' }), configYaml: pricingYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await database?.dispose();
    await mock?.close();
  });

  it('writes no records and answers /admin/usage with 503 feature_unavailable', async () => {
    const stream = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('mock-model', { stream: true }),
    });
    expect(stream.status).toBe(200);
    const json = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('mock-model') });
    expect(json.status).toBe(200);
    const reply = await rawRequest(`${gateway.url}/admin/usage`, { headers: bearer() });
    expectEnvelope(reply, { status: 503, type: 'invalid_request_error', code: 'feature_unavailable' });
    // Several flush intervals (100 ms) pass; nothing may have been written.
    await sleep(500);
    expect(await gateway.stop()).toBe(0);
    const storage = await database.open(gateway);
    try {
      for (const requestId of [stream.headers['x-request-id'], json.headers['x-request-id']]) {
        expect(await storage.usage.findByRequestId(String(requestId))).toEqual([]);
      }
      expect((await storage.usage.totals({ from: 0, to: Date.now() + 60_000 })).requests).toBe(0);
    } finally {
      await storage.close();
    }
  });
});
