import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, parseJson, rawRequest } from '../support/http.ts';
import {
  embeddingsHandler,
  MOCK_EMBEDDING_DIMENSIONS,
  MOCK_EMBEDDING_TOKENS_PER_INPUT,
  mockEmbedding,
} from '../support/mock-openai-extras.ts';
import { type MockUpstream, type RecordedRequest, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';

// CONTRACT section 5: POST /v1/embeddings through the gateway with the official openai
// client: routed like chat, `provider` hint stripped, usage recorded, limits enforced.

const embeddingModel = 'text-embedding-3-small';

function embeddingRequests(mock: MockUpstream): RecordedRequest[] {
  return mock.requests.filter((recorded) => recorded.method === 'POST' && recorded.path === '/v1/embeddings');
}

function lastEmbeddingBody(mock: MockUpstream): Record<string, unknown> {
  const last = embeddingRequests(mock).at(-1);
  expect(last, 'the mock received no embeddings request').toBeDefined();
  return last?.body as Record<string, unknown>;
}

describe('POST /v1/embeddings', () => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.route('POST', '/embeddings', embeddingsHandler());
    database = await createGatewayDatabase('sqlite');
    gateway = await startGateway({
      env: gatewayEnv(mock, {
        OPENAI_MODELS: `${embeddingModel},error-400,error-500`,
        OPENAI_SPARE_API_KEY: 'sk-spare',
        OPENAI_SPARE_BASE_URL: mock.url,
        OPENAI_SPARE_MODELS: embeddingModel,
        SET_RATE_LIMIT_EMB__LIMITED: 'rpm=1',
      }),
    });
    storage = await database.open(gateway);
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  it('embeds a single input: vectors decoded by the client, provider stamped, bare model upstream', async () => {
    const { data: result, response } = await client.embeddings
      .create({ model: `openai/${embeddingModel}`, input: 'hello world' })
      .withResponse();
    expect(result.object).toBe('list');
    expect(result.data).toHaveLength(1);
    expect(result.data[0]?.index).toBe(0);
    expect(result.data[0]?.embedding).toHaveLength(MOCK_EMBEDDING_DIMENSIONS);
    mockEmbedding(0).forEach((value, dimension) => expect(result.data[0]?.embedding[dimension]).toBeCloseTo(value, 5));
    expect(result.usage).toEqual({ prompt_tokens: MOCK_EMBEDDING_TOKENS_PER_INPUT, total_tokens: MOCK_EMBEDDING_TOKENS_PER_INPUT });
    expect((result as unknown as { provider?: unknown }).provider).toBe('openai');
    expect(response.headers.get('x-request-id')).toBeTruthy();

    const upstream = embeddingRequests(mock).at(-1);
    expect(upstream?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(upstream?.body).toEqual({ model: embeddingModel, input: 'hello world', encoding_format: 'base64' });
  });

  it('embeds an array of inputs, float encoding passed through as asked', async () => {
    const result = await client.embeddings.create({ model: embeddingModel, input: ['one', 'two', 'three'], encoding_format: 'float' });
    expect(result.data.map((entry) => entry.index)).toEqual([0, 1, 2]);
    expect(result.data[2]?.embedding).toEqual(mockEmbedding(2));
    expect(result.usage.total_tokens).toBe(3 * MOCK_EMBEDDING_TOKENS_PER_INPUT);
    expect(lastEmbeddingBody(mock)).toMatchObject({ model: embeddingModel, input: ['one', 'two', 'three'], encoding_format: 'float' });
  });

  it('honours the provider hint and strips it before the upstream call', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/embeddings`, {
      headers: bearer(),
      body: { model: embeddingModel, input: 'hinted', provider: 'openai-spare' },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(parseJson(reply.text)['provider']).toBe('openai-spare');
    const upstream = embeddingRequests(mock).at(-1);
    expect(upstream?.headers.authorization).toBe('Bearer sk-spare');
    expect(upstream?.body).toEqual({ model: embeddingModel, input: 'hinted' });
  });

  it('records usage: endpoint, provider, bare model, tokens, user path', async () => {
    const { response } = await client.embeddings
      .create({ model: embeddingModel, input: ['a', 'b'] }, { headers: { 'X-User-Path': '/emb/usage' } })
      .withResponse();
    const requestId = response.headers.get('x-request-id') ?? '';
    const record = await usageRecordOf(storage, requestId);
    expect(record).toMatchObject({
      requestId,
      userPath: '/emb/usage',
      endpoint: '/v1/embeddings',
      provider: 'openai',
      model: embeddingModel,
      promptTokens: 2 * MOCK_EMBEDDING_TOKENS_PER_INPUT,
      completionTokens: 0,
      totalTokens: 2 * MOCK_EMBEDDING_TOKENS_PER_INPUT,
      status: 200,
      stream: false,
    });
  });

  it('answers 429 from a user-path rule, with the rate-limit envelope and headers', async () => {
    const options = { headers: { 'X-User-Path': '/emb/limited' } };
    await client.embeddings.create({ model: embeddingModel, input: 'first' }, options);
    const before = embeddingRequests(mock).length;
    const thrown = await rejectionOf(client.embeddings.create({ model: embeddingModel, input: 'second' }, options));
    const error = expectClientError(thrown, { status: 429, type: 'rate_limit_error', provider: 'ratelimit', code: 'rate_limit_exceeded' });
    expect(error.message).toBe('rate limit exceeded for /emb/limited: minute request limit of 1 reached');
    expect(Number((thrown as { headers?: Headers }).headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(embeddingRequests(mock)).toHaveLength(before);
  });

  it('validates the body and maps upstream errors (CONTRACT section 4)', async () => {
    const missingInput = await rawRequest(`${gateway.url}/v1/embeddings`, { headers: bearer(), body: { model: embeddingModel } });
    expectEnvelope(missingInput, { status: 400, type: 'invalid_request_error', code: 'missing_field', param: 'input' });
    const missingModel = await rawRequest(`${gateway.url}/v1/embeddings`, { headers: bearer(), body: { input: 'x' } });
    expectEnvelope(missingModel, { status: 400, type: 'invalid_request_error', code: 'missing_field', param: 'model' });
    const unknown = await rawRequest(`${gateway.url}/v1/embeddings`, { headers: bearer(), body: { model: 'no-such-model', input: 'x' } });
    expectEnvelope(unknown, { status: 404, type: 'not_found_error', code: 'model_not_found' });

    const rejected = await rawRequest(`${gateway.url}/v1/embeddings`, { headers: bearer(), body: { model: 'error-400', input: 'x' } });
    const error = expectEnvelope(rejected, { status: 400, type: 'invalid_request_error', provider: 'openai', code: 'upstream_error' });
    expect(error.message).toBe('mock upstream embeddings error 400');
    const broken = await rawRequest(`${gateway.url}/v1/embeddings`, { headers: bearer(), body: { model: 'error-500', input: 'x' } });
    expectEnvelope(broken, { status: 500, type: 'provider_error', provider: 'openai', code: 'upstream_error' });
  });
});
