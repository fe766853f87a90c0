import type { GenerateContentResponse } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { expectApiError, geminiClient, rejectionOf, requestIdOf } from '../support/clients.ts';
import { expectEnvelope, expectGoogleEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, chatBody, rawRequest } from '../support/http.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { eventually } from '../support/wait.ts';

// Issue 17 on the Gemini dialect's routes: every error, from the auth hook, the body parser,
// the route, the pipeline, the rate limiter or the upstream, comes in Google's envelope
// {"error":{"code","message","status"}} with the gateway's status and headers, so the
// @google/genai SDK raises its ApiError; a stream that breaks ends with such an error object.

const configYaml = (openai: MockUpstream, broken: MockUpstream, anthropic: MockAnthropic): string => `
providers:
  openai:
    type: openai
    api_key: ${UPSTREAM_KEY}
    base_url: ${openai.url}
    models: [mock-model, error-429, error-503]
  broken:
    type: openai
    api_key: ${UPSTREAM_KEY}
    base_url: ${broken.url}
    models: [mock-model]
  claude:
    type: anthropic
    api_key: sk-ant-upstream
    base_url: ${anthropic.url}
    models: [stream-error]
rate_limits:
  user_paths:
    - path: /gemini-limited
      limits: [{ period: minute, max_requests: 1 }]
`;

const contents = [{ role: 'user', parts: [{ text: 'Say hello' }] }];

describe('errors on the Gemini dialect', () => {
  let openai: MockUpstream;
  let broken: MockUpstream;
  let anthropic: MockAnthropic;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let url: (model: string, method?: string) => string;

  beforeAll(async () => {
    openai = await startMockUpstream();
    // An upstream that starts a stream and then drops the connection.
    broken = await startMockUpstream();
    broken.route('POST', '/chat/completions', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"id":"c1","model":"mock-model","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
      setTimeout(() => response.socket?.destroy(), 50);
    });
    anthropic = await startMockAnthropic({ chunkDelayMs: 20 });
    database = await createGatewayDatabase('sqlite');
    const env = { MASTER_KEY, UPSTREAM_RETRIES: '0', BODY_SIZE_LIMIT: '4KB', LOG_LEVEL: 'info', ...database.env };
    gateway = await startGateway({ env, configYaml: configYaml(openai, broken, anthropic) });
    storage = await database.open(gateway);
    url = (model, method = 'generateContent') => `${gateway.url}/v1beta/models/${model}:${method}`;
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await anthropic?.close();
    await broken?.close();
    await openai?.close();
  });

  it('answers a wrong or missing key with 401 UNAUTHENTICATED, and never logs a ?key=', async () => {
    const thrown = await rejectionOf(geminiClient(gateway, 'wrong-key').models.generateContent({ model: 'openai/mock-model', contents }));
    expectApiError(thrown, 401, 'UNAUTHENTICATED');
    expectGoogleEnvelope(await rawRequest(url('openai/mock-model'), { body: { contents } }), 401, 'UNAUTHENTICATED');
    const query = await rawRequest(`${url('openai/mock-model')}?key=wrong-secret-key`, { body: { contents } });
    expectGoogleEnvelope(query, 401, 'UNAUTHENTICATED');
    await eventually(
      async () => (gateway.output.some((line) => line.includes('key=[REDACTED]')) ? true : undefined),
      'the request log line',
    );
    expect(gateway.output.join('\n')).not.toContain('wrong-secret-key');
  });

  it('answers an unknown model with 404 NOT_FOUND, and an unknown method too', async () => {
    const thrown = await rejectionOf(geminiClient(gateway).models.generateContent({ model: 'no-such-model', contents }));
    const body = expectApiError(thrown, 404, 'NOT_FOUND');
    expect(body.error.details[0]?.reason).toBe('model_not_found');
    expectGoogleEnvelope(await rawRequest(url('openai/mock-model', 'predict'), { headers: bearer(), body: {} }), 404, 'NOT_FOUND');
    expectGoogleEnvelope(await rawRequest(`${gateway.url}/v1beta/corpora`, { headers: bearer() }), 404, 'NOT_FOUND');
  });

  it('answers a rate-limit breach with 429 RESOURCE_EXHAUSTED and Retry-After', async () => {
    const limited = geminiClient(gateway, MASTER_KEY, { 'X-User-Path': '/gemini-limited' });
    await limited.models.generateContent({ model: 'openai/mock-model', contents });
    const thrown = await rejectionOf(limited.models.generateContent({ model: 'openai/mock-model', contents }));
    const body = expectApiError(thrown, 429, 'RESOURCE_EXHAUSTED');
    expect(body.error.message).toContain('/gemini-limited');
    const headers = { ...bearer(), 'X-User-Path': '/gemini-limited' };
    const raw = await rawRequest(url('openai/mock-model'), { headers, body: { contents } });
    expectGoogleEnvelope(raw, 429, 'RESOURCE_EXHAUSTED');
    expect(Number(raw.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it("maps upstream failures: 429 RESOURCE_EXHAUSTED with the provider's message, 503 UNAVAILABLE", async () => {
    const throttled = expectGoogleEnvelope(
      await rawRequest(url('openai/error-429'), { headers: bearer(), body: { contents } }),
      429,
      'RESOURCE_EXHAUSTED',
    );
    expect(throttled.error.details[0]?.metadata['provider']).toBe('openai');
    expectGoogleEnvelope(await rawRequest(url('openai/error-503'), { headers: bearer(), body: { contents } }), 503, 'UNAVAILABLE');
  });

  it('renders body errors as 400 INVALID_ARGUMENT: invalid JSON, missing contents, unsupported tools; 413 too large', async () => {
    const headers = { ...bearer(), 'content-type': 'application/json' };
    expectGoogleEnvelope(await rawRequest(url('openai/mock-model'), { headers, body: '{"contents": ' }), 400, 'INVALID_ARGUMENT');
    const missing = expectGoogleEnvelope(await rawRequest(url('openai/mock-model'), { headers, body: {} }), 400, 'INVALID_ARGUMENT');
    expect(missing.error.message).toContain('contents');
    const search = await rawRequest(url('openai/mock-model'), { headers, body: { contents, tools: [{ googleSearch: {} }] } });
    expect(expectGoogleEnvelope(search, 400, 'INVALID_ARGUMENT').error.message).toContain('googleSearch');
    const huge = { contents: [{ parts: [{ text: 'x'.repeat(8 * 1024) }] }] };
    expectGoogleEnvelope(await rawRequest(url('openai/mock-model'), { headers, body: huge }), 413, 'INVALID_ARGUMENT');
  });

  it('keeps the dialect to its routes: chat errors stay in the gateway envelope', async () => {
    const chat = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('no-such-model') });
    expectEnvelope(chat, { status: 404, type: 'not_found_error', code: 'model_not_found' });
  });

  it('ends a stream the upstream breaks with a Google error (ApiError) and meters it as failed', async () => {
    const stream = await geminiClient(gateway).models.generateContentStream({ model: 'broken/mock-model', contents });
    const chunks: GenerateContentResponse[] = [];
    const thrown = await rejectionOf(
      (async () => {
        for await (const chunk of stream) chunks.push(chunk);
      })(),
    );
    expectApiError(thrown, 502, 'INTERNAL');
    expect(chunks.map((chunk) => chunk.text)).toEqual(['Hel']);
    const record = await usageRecordOf(storage, requestIdOf(chunks[0] ?? {}));
    expect(record).toMatchObject({ endpoint: '/v1beta/models:streamGenerateContent', provider: 'broken', status: 502 });
    const raw = await rawRequest(`${url('broken/mock-model', 'streamGenerateContent')}?alt=sse`, { headers: bearer(), body: { contents } });
    const events = raw.text.split('\r\n\r\n').filter((event) => event !== '');
    expect(JSON.parse(events.at(-1)?.slice('data: '.length) ?? '')).toMatchObject({ error: { code: 502, status: 'INTERNAL' } });
  });

  it('ends a native Anthropic stream that reports an error with a Google error', async () => {
    const stream = await geminiClient(gateway).models.generateContentStream({ model: 'claude/stream-error', contents });
    const thrown = await rejectionOf(
      (async () => {
        for await (const chunk of stream) expect(chunk.candidates).toBeDefined();
      })(),
    );
    expect(thrown).toHaveProperty('status');
    expect((thrown as { status: number }).status).toBeGreaterThanOrEqual(500);
  });
});
