import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import type { UsageRecord } from '../../src/usage/usage-store.ts';
import { adminUsage } from '../support/admin.ts';
import { openAIClient } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { closedPort, parseJson } from '../support/http.ts';
import { MOCK_CONTENT, type MockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { chat, chatCount, closeAll, instancesEnv, servedBy, startMocks } from '../support/virtual-models.ts';
import { eventually } from '../support/wait.ts';

// CONTRACT section 8: a virtual model fails over to its next target on upstream 5xx, 429,
// timeouts and connection errors (streams before their first byte), never on other 4xx, and
// every executed attempt is recorded against the instance that executed it.

const models = ['fo-500', 'fo-503', 'fo-429', 'fo-hang', 'fo-stream', 'fo-400', 'fo-all', 'fo-dead', 'rr-500'];

/** A `failover` alias `<model>-alias` over openai then openai-b, both serving `<model>`. */
const failoverAlias = (model: string, first = 'openai'): string => `
  - name: ${model}-alias
    strategy: failover
    targets:
      - { provider: ${first}, model: ${model} }
      - { provider: openai-b, model: ${model} }`;

const configYaml = `
pricing:
  fo-500: { input_per_mtok: 1, output_per_mtok: 1 }
virtual_models:${models
  .filter((model) => model.startsWith('fo-') && model !== 'fo-dead')
  .map((model) => failoverAlias(model))
  .join('')}${failoverAlias('fo-dead', 'openai-c')}
  - name: rr-500-alias
    strategy: round_robin
    targets:
      - { provider: openai, model: rr-500 }
      - { provider: openai-b, model: rr-500 }
`;

describe('virtual model failover', () => {
  let mocks: MockUpstream[];
  let a: MockUpstream;
  let b: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: OpenAI;

  beforeAll(async () => {
    mocks = await startMocks(2);
    [a, b] = mocks as [MockUpstream, MockUpstream];
    database = await createGatewayDatabase('sqlite');
    const dead = `http://127.0.0.1:${await closedPort()}/v1`;
    const env = instancesEnv(mocks, models, {
      OPENAI_C_API_KEY: UPSTREAM_KEY,
      OPENAI_C_BASE_URL: dead,
      OPENAI_C_MODELS: 'fo-dead',
      UPSTREAM_TIMEOUT_SECONDS: '2',
      // The breaker has its own suite; here every failure must reach the upstream.
      CIRCUIT_BREAKER_FAILURES: '1000',
      // A user-path rule on every request, for the x-ratelimit headers of a failed-over answer.
      SET_RATE_LIMIT_: 'rph=100000',
    });
    gateway = await startGateway({ env, configYaml });
    storage = await database.open(gateway);
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await closeAll(mocks ?? []);
  });

  /** The usage rows of one request (one per executed attempt), once all `count` are written. */
  async function attemptsOf(requestId: string, count: number): Promise<UsageRecord[]> {
    return eventually(async () => {
      const found = await storage.usage.findByRequestId(requestId);
      return found.length >= count ? found : undefined;
    }, `${count} usage records for ${requestId}`);
  }

  it('a primary answering 500 fails over: the secondary serves, both attempts are recorded where they executed', async () => {
    a.setBehavior('fo-500', { kind: 'error', status: 500 });
    const reply = await chat(gateway, 'fo-500-alias');
    expect(reply.status, reply.text).toBe(200);
    const body = parseJson(reply.text);
    expect(body['provider']).toBe('openai-b');
    expect(body['model']).toBe('fo-500');
    expect(chatCount(a, 'fo-500')).toBe(1); // 500 is not retried on the same instance
    expect(chatCount(b, 'fo-500')).toBe(1);

    const requestId = String(reply.headers['x-request-id']);
    const records = await attemptsOf(requestId, 2);
    expect(records).toHaveLength(2);
    const failed = records.find((record) => record.provider === 'openai');
    const served = records.find((record) => record.provider === 'openai-b');
    expect(failed).toMatchObject({ model: 'fo-500', status: 500, totalTokens: 0, cacheHit: false });
    expect(served).toMatchObject({ model: 'fo-500', status: 200, promptTokens: 12, completionTokens: 5, totalTokens: 17 });
    expect(served?.costUsd).toBeCloseTo(17 / 1e6, 12);
    expect(failed?.costUsd ?? 0).toBe(0);

    const byProvider = await adminUsage(gateway, { group_by: 'provider', model: 'fo-500' });
    expect(byProvider.get('openai')).toMatchObject({ requests: 1, total_tokens: 0 });
    expect(byProvider.get('openai-b')).toMatchObject({ requests: 1, prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
  });

  it('an answer served after a failover still carries the x-ratelimit headers of its user path', async () => {
    const direct = await chat(gateway, 'openai-b/fo-500');
    expect(direct.status, direct.text).toBe(200);
    expect(direct.headers['x-ratelimit-limit-requests']).toBe('100000');
    const failedOver = await chat(gateway, 'fo-500-alias');
    expect(failedOver.status, failedOver.text).toBe(200);
    expect(parseJson(failedOver.text)['provider']).toBe('openai-b');
    expect(failedOver.headers['x-ratelimit-limit-requests']).toBe('100000');
    expect(Number(failedOver.headers['x-ratelimit-remaining-requests'])).toBeLessThan(100000);
  });

  it('a primary answering 503 is retried once on the same instance, then fails over', async () => {
    a.setBehavior('fo-503', { kind: 'error', status: 503 });
    expect(await servedBy(gateway, 'fo-503-alias')).toBe('openai-b');
    expect(chatCount(a, 'fo-503')).toBe(2); // UPSTREAM_RETRIES defaults to 1
    expect(chatCount(b, 'fo-503')).toBe(1);
  });

  it('a primary answering 429 fails over without a retry', async () => {
    a.setBehavior('fo-429', { kind: 'error', status: 429, headers: { 'Retry-After': '7' } });
    expect(await servedBy(gateway, 'fo-429-alias')).toBe('openai-b');
    expect(chatCount(a, 'fo-429')).toBe(1);
    expect(chatCount(b, 'fo-429')).toBe(1);
  });

  it('a hanging primary times out (UPSTREAM_TIMEOUT_SECONDS=2) and the secondary serves', async () => {
    a.setBehavior('fo-hang', { kind: 'hang' });
    const started = Date.now();
    const completion = await client.chat.completions.create({ model: 'fo-hang-alias', messages: [{ role: 'user', content: 'Hi' }] });
    const elapsed = Date.now() - started;
    expect((completion as unknown as { provider: string }).provider).toBe('openai-b');
    expect(completion.choices[0]?.message.content).toBe(MOCK_CONTENT);
    expect(elapsed).toBeGreaterThanOrEqual(1_800);
    expect(elapsed).toBeLessThan(6_000);
    expect(chatCount(a, 'fo-hang')).toBe(1); // a timeout is not retried
    expect(chatCount(b, 'fo-hang')).toBe(1);
  });

  it('a stream fails over before its first byte: the openai client reads the secondary stream', async () => {
    a.setBehavior('fo-stream', { kind: 'error', status: 500 });
    const stream = await client.chat.completions.create({
      model: 'fo-stream-alias',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    let content = '';
    const providers = new Set<unknown>();
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      providers.add((chunk as unknown as { provider?: unknown }).provider);
    }
    expect(content).toBe('tok0 tok1 tok2 tok3 tok4 '); // the mock's five stream chunks
    expect([...providers]).toEqual(['openai-b']);
    expect(chatCount(a, 'fo-stream')).toBe(1);
    expect(chatCount(b, 'fo-stream')).toBe(1);
  });

  it('a 400 from the primary goes back to the client without failing over', async () => {
    a.setBehavior('fo-400', { kind: 'error', status: 400 });
    const reply = await chat(gateway, 'fo-400-alias');
    expectEnvelope(reply, { status: 400, type: 'invalid_request_error', provider: 'openai' });
    expect(chatCount(a, 'fo-400')).toBe(1);
    expect(chatCount(b, 'fo-400')).toBe(0);
  });

  it('when every target fails, the client gets the last upstream error', async () => {
    a.setBehavior('fo-all', { kind: 'error', status: 500 });
    b.setBehavior('fo-all', { kind: 'error', status: 500 });
    const reply = await chat(gateway, 'fo-all-alias');
    expectEnvelope(reply, { status: 500, type: 'provider_error', provider: 'openai-b' });
    expect(chatCount(a, 'fo-all')).toBe(1);
    expect(chatCount(b, 'fo-all')).toBe(1);
  });

  it('a primary that refuses connections fails over to the secondary', async () => {
    expect(await servedBy(gateway, 'fo-dead-alias')).toBe('openai-b');
    expect(chatCount(b, 'fo-dead')).toBe(1);
  });

  it('round_robin also fails over to the other target on 5xx', async () => {
    a.setBehavior('rr-500', { kind: 'error', status: 500 });
    const served: string[] = [];
    for (let index = 0; index < 6; index += 1) served.push(await servedBy(gateway, 'rr-500-alias'));
    expect(served).toEqual(Array.from({ length: 6 }, () => 'openai-b'));
    // Round robin picked the failing target for half of the requests; each then went to B.
    expect(chatCount(a, 'rr-500')).toBe(3);
    expect(chatCount(b, 'rr-500')).toBe(6);
  });
});
