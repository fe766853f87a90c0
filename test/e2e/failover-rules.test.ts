import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import type { UsageRecord } from '../../src/usage/usage-store.ts';
import { openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { call, parseJson } from '../support/http.ts';
import { embeddingsHandler } from '../support/mock-openai-extras.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { ruleOf } from '../support/rate-limits.ts';
import { createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { chat, chatCount, closeAll, instancesEnv, servedBy, startMocks } from '../support/virtual-models.ts';
import { eventually } from '../support/wait.ts';

// Issue 15: a failover rule on a concrete selector (`failover.rules`) sends a direct request
// on to its fallbacks when the target fails (per `on`) or is saturated, charging the target
// that executed and counting the user path once. Without a rule, a direct request keeps the
// old behaviour (SEED-SPEC errors 3: the saturated target's honest 429, no upstream call).

const models = ['fr-500', 'fr-only429', 'fr-429', 'fr-stream', 'fr-sat', 'fr-sat-strict', 'fr-bare', 'fr-none', 'mock-model'];

const configYaml = `
pricing:
  fr-500: { input_per_mtok: 1, output_per_mtok: 1 }
failover:
  rules:
    - { model: openai/fr-500, fallbacks: [openai-b/fr-500] }
    - { model: openai/fr-only429, fallbacks: [openai-b/fr-only429], on: [429] }
    - { model: openai/fr-429, fallbacks: [openai-b/fr-429], on: [429] }
    - { model: openai/fr-stream, fallbacks: [no-such-model, openai-b/fr-stream] }
    - { model: openai-c/fr-sat, fallbacks: [openai-b/fr-sat], on: [saturated] }
    - { model: openai-c/fr-sat-strict, fallbacks: [openai-b/fr-sat-strict], on: [5xx, 429, timeout, connection] }
    - { model: fr-bare, fallbacks: [openai-b/fr-bare] }
    - { model: openai-cut/mock-model, fallbacks: [openai-b/mock-model] }
    - { model: openai/error-500, fallbacks: [openai-b/text-embedding-3-small] }
`;

describe('failover rules for direct requests', () => {
  let mocks: MockUpstream[];
  let a: MockUpstream;
  let b: MockUpstream;
  let c: MockUpstream;
  let cut: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: OpenAI;

  beforeAll(async () => {
    mocks = await startMocks(3);
    [a, b, c] = mocks as [MockUpstream, MockUpstream, MockUpstream];
    // An upstream that starts a stream, then drops the connection.
    cut = await startMockUpstream();
    cut.route('POST', '/chat/completions', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"id":"c1","model":"mock-model","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
      setTimeout(() => response.socket?.destroy(), 50);
    });
    for (const mock of [a, b]) mock.route('POST', '/embeddings', embeddingsHandler());
    database = await createGatewayDatabase('sqlite');
    const env = instancesEnv(mocks, [...models, 'error-500', 'text-embedding-3-small'], {
      OPENAI_CUT_API_KEY: UPSTREAM_KEY,
      OPENAI_CUT_BASE_URL: cut.url,
      OPENAI_CUT_MODELS: 'mock-model',
      UPSTREAM_RETRIES: '0',
      CIRCUIT_BREAKER_FAILURES: '1000',
      // The root user path's rule counts every request once; openai-c allows one request an hour.
      SET_RATE_LIMIT_: 'rph=100000',
      SET_PROVIDER_RATE_LIMIT_OPENAI_C: 'rph=1',
    });
    gateway = await startGateway({ env, configYaml, startTimeoutMs: 60_000 });
    storage = await database.open(gateway);
    client = openAIClient(gateway);
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await closeAll([...(mocks ?? []), cut]);
  });

  async function recordsOf(requestId: string, count: number): Promise<UsageRecord[]> {
    return eventually(async () => {
      const found = await storage.usage.findByRequestId(requestId);
      return found.length >= count ? found : undefined;
    }, `${count} usage records for ${requestId}`);
  }

  it('a 500 on the target fails over: the fallback serves and pays, the user path counts the request once', async () => {
    a.setBehavior('fr-500', { kind: 'error', status: 500 });
    const before = (await ruleOf(gateway, 'user_path', '/')).requests_used;
    const reply = await chat(gateway, 'openai/fr-500');
    expect(reply.status, reply.text).toBe(200);
    expect(parseJson(reply.text)).toMatchObject({ provider: 'openai-b', model: 'fr-500' });
    expect(chatCount(a, 'fr-500')).toBe(1);
    expect(chatCount(b, 'fr-500')).toBe(1);
    expect((await ruleOf(gateway, 'user_path', '/')).requests_used).toBe(before + 1);

    const records = await recordsOf(String(reply.headers['x-request-id']), 2);
    expect(records).toHaveLength(2);
    const failed = records.find((record) => record.provider === 'openai');
    const served = records.find((record) => record.provider === 'openai-b');
    expect(failed).toMatchObject({ model: 'fr-500', status: 500, totalTokens: 0 });
    expect(failed?.costUsd ?? 0).toBe(0);
    expect(served).toMatchObject({ model: 'fr-500', status: 200, promptTokens: 12, completionTokens: 5, totalTokens: 17 });
    expect(served?.costUsd).toBeCloseTo(17 / 1e6, 12);
  });

  it('a rule with on: [429] does not fail over on a 500, and does on a 429', async () => {
    a.setBehavior('fr-only429', { kind: 'error', status: 500 });
    expectEnvelope(await chat(gateway, 'openai/fr-only429'), { status: 500, type: 'provider_error', provider: 'openai' });
    expect(chatCount(a, 'fr-only429')).toBe(1);
    expect(chatCount(b, 'fr-only429')).toBe(0);

    a.setBehavior('fr-429', { kind: 'error', status: 429, headers: { 'Retry-After': '7' } });
    expect(await servedBy(gateway, 'openai/fr-429')).toBe('openai-b');
    expect(chatCount(a, 'fr-429')).toBe(1);
    expect(chatCount(b, 'fr-429')).toBe(1);
  });

  it('a saturated target is skipped without a call when on names saturated, and answers 429 when it does not', async () => {
    expect(await servedBy(gateway, 'openai-c/fr-sat')).toBe('openai-c'); // openai-c's one request of the hour
    expect(await servedBy(gateway, 'openai-c/fr-sat')).toBe('openai-b');
    expect(chatCount(c, 'fr-sat')).toBe(1);
    expect(chatCount(b, 'fr-sat')).toBe(1);
    expect((await ruleOf(gateway, 'provider', 'openai-c')).requests_used).toBe(1);

    const refused = await chat(gateway, 'openai-c/fr-sat-strict');
    const error = expectEnvelope(refused, { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', provider: 'ratelimit' });
    expect(error.message).toContain('provider openai-c');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(chatCount(c, 'fr-sat-strict')).toBe(0);
    expect(chatCount(b, 'fr-sat-strict')).toBe(0);
  });

  it('a stream fails over before its first byte, past a fallback no instance serves', async () => {
    a.setBehavior('fr-stream', { kind: 'error', status: 503 });
    const stream = await client.chat.completions.create({
      model: 'openai/fr-stream',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    let content = '';
    const providers = new Set<unknown>();
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      providers.add((chunk as unknown as { provider?: unknown }).provider);
    }
    expect(content).toBe('tok0 tok1 tok2 tok3 tok4 ');
    expect([...providers]).toEqual(['openai-b']);
    expect(chatCount(a, 'fr-stream')).toBe(1);
    expect(chatCount(b, 'fr-stream')).toBe(1);
  });

  it('a stream broken after its first byte ends with an error for the client, without failing over', async () => {
    const stream = await client.chat.completions.create({
      model: 'openai-cut/mock-model',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    let content = '';
    const thrown = await rejectionOf(
      (async () => {
        for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
      })(),
    );
    expect(thrown).toBeInstanceOf(Error);
    expect(content).toBe('Hel');
    expect(chatCount(b, 'mock-model')).toBe(0);
  });

  it('a rule on a bare model applies to that model on any instance', async () => {
    a.setBehavior('fr-bare', { kind: 'error', status: 500 });
    expect(await servedBy(gateway, 'openai/fr-bare')).toBe('openai-b');
    expect(await servedBy(gateway, 'fr-bare')).toBe('openai-b'); // the bare selector resolves to openai first
    expect(chatCount(a, 'fr-bare')).toBe(2);
    expect(chatCount(b, 'fr-bare')).toBe(2);
  });

  it('embeddings fail over by the same rules', async () => {
    // The mock's embeddings route answers 500 for the model error-500.
    const reply = await call(gateway, '/v1/embeddings', { body: { model: 'openai/error-500', input: 'hello' } });
    expect(reply.status, reply.text).toBe(200);
    expect(parseJson(reply.text)['provider']).toBe('openai-b');
    const embeddingBodies = (mock: MockUpstream): unknown[] =>
      mock.requests
        .filter((recorded) => recorded.path === '/v1/embeddings')
        .map((recorded) => (recorded.body as { model?: unknown }).model);
    expect(embeddingBodies(a)).toEqual(['error-500']);
    expect(embeddingBodies(b)).toEqual(['text-embedding-3-small']);
    const records = await recordsOf(String(reply.headers['x-request-id']), 2);
    expect(records.map((record) => `${record.provider}/${record.model} ${record.status}`).sort()).toEqual([
      'openai-b/text-embedding-3-small 200',
      'openai/error-500 500',
    ]);
  });

  it('without a rule a direct request keeps the old behaviour: the upstream error, no other instance called', async () => {
    a.setBehavior('fr-none', { kind: 'error', status: 500 });
    expectEnvelope(await chat(gateway, 'openai/fr-none'), { status: 500, type: 'provider_error', provider: 'openai' });
    expect(chatCount(b, 'fr-none')).toBe(0);
    // A saturated instance without a rule: the honest 429, no call (SEED-SPEC errors 3).
    const refused = await call(gateway, '/v1/chat/completions', {
      body: { model: 'openai-c/fr-none', messages: [{ role: 'user', content: 'Hi' }] },
    });
    expectEnvelope(refused, { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', provider: 'ratelimit' });
    expect(chatCount(c, 'fr-none')).toBe(0);
    expect(chatCount(b, 'fr-none')).toBe(0);
  });
});
