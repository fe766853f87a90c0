import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { anthropicClient, expectSdkError, rejectionOf } from '../support/clients.ts';
import { expectAnthropicEnvelope, expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, chatBody, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { parseAnthropicSse } from '../support/streams.ts';
import type { Storage } from '../../src/storage/storage.ts';

// CONTRACT section 4 on /v1/messages: every error, from the auth hook, the body parser, the
// pipeline, the rate limiter or the upstream, comes in Anthropic's envelope
// {"type":"error","error":{"type","message"}} with the gateway's status and headers, so the
// official client raises its own error classes. Other routes keep the gateway's envelope.

const configYaml = `
rate_limits:
  user_paths:
    - path: /messages-limited
      limits: [{ period: minute, max_requests: 1 }]
`;

const messagesBody = (model: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model,
  max_tokens: 32,
  messages: [{ role: 'user', content: 'Say hello' }],
  ...extra,
});

describe('errors on POST /v1/messages', () => {
  let mock: MockUpstream;
  let broken: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: Anthropic;
  let url: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    // An upstream that starts a stream and then drops the connection.
    broken = await startMockUpstream();
    broken.route('POST', '/chat/completions', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"id":"c1","model":"mock-model","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
      setTimeout(() => response.socket?.destroy(), 50);
    });
    database = await createGatewayDatabase('sqlite');
    const env = gatewayEnv(mock, {
      OPENAI_MODELS: 'mock-model,error-500,error-503,error-401',
      OPENAI_BROKEN_API_KEY: UPSTREAM_KEY,
      OPENAI_BROKEN_BASE_URL: broken.url,
      OPENAI_BROKEN_MODELS: 'mock-model',
      UPSTREAM_RETRIES: '0',
      BODY_SIZE_LIMIT: '4KB',
      ...database.env,
    });
    gateway = await startGateway({ env, configYaml });
    storage = await database.open(gateway);
    client = anthropicClient(gateway);
    url = `${gateway.url}/v1/messages`;
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await mock?.close();
    await broken?.close();
  });

  it('answers a wrong or missing key with 401 authentication_error (AuthenticationError)', async () => {
    const thrown = await rejectionOf(anthropicClient(gateway, 'wrong-key').messages.create(messagesBody('openai/mock-model') as never));
    expectSdkError(thrown, Anthropic.AuthenticationError, 401, 'authentication_error');
    const wrong = await rawRequest(url, {
      headers: { 'x-api-key': 'wrong-key', 'anthropic-version': '2023-06-01' },
      body: messagesBody('x'),
    });
    expectAnthropicEnvelope(wrong, 401, 'authentication_error');
    expectAnthropicEnvelope(await rawRequest(url, { body: messagesBody('x') }), 401, 'authentication_error');
  });

  it('answers an unknown model with 404 not_found_error (NotFoundError)', async () => {
    const thrown = await rejectionOf(
      client.messages.create({ model: 'no-such-model', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
    );
    const error = expectSdkError(thrown, Anthropic.NotFoundError, 404, 'not_found_error');
    expect(error.apiMessage).toContain('no-such-model');
  });

  it('maps upstream failures: 500 -> api_error, 503 -> overloaded_error, 401 -> authentication_error', async () => {
    const failed = await rejectionOf(
      client.messages.create({ model: 'openai/error-500', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
    );
    const error = expectSdkError(failed, Anthropic.InternalServerError, 500, 'api_error');
    expect(error.apiMessage).toContain('mock upstream error 500');
    expectAnthropicEnvelope(await rawRequest(url, { headers: bearer(), body: messagesBody('openai/error-503') }), 503, 'overloaded_error');
    expectAnthropicEnvelope(
      await rawRequest(url, { headers: bearer(), body: messagesBody('openai/error-401') }),
      401,
      'authentication_error',
    );
  });

  it('answers a rate-limit breach with 429 rate_limit_error, Retry-After and x-ratelimit headers (RateLimitError)', async () => {
    const limited = anthropicClient(gateway, undefined, { 'X-User-Path': '/messages-limited' });
    const params = { model: 'openai/mock-model', max_tokens: 8, messages: [{ role: 'user' as const, content: 'x' }] };
    const { response } = await limited.messages.create(params).withResponse();
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('1');
    const thrown = await rejectionOf(limited.messages.create(params));
    const error = expectSdkError(thrown, Anthropic.RateLimitError, 429, 'rate_limit_error');
    expect(Number(error.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(error.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(error.apiMessage).toContain('/messages-limited');
  });

  it('renders body errors in the dialect: invalid JSON, too large, missing max_tokens, unsupported blocks', async () => {
    const headers = { ...bearer(), 'content-type': 'application/json' };
    expectAnthropicEnvelope(await rawRequest(url, { headers, body: '{"model": ' }), 400, 'invalid_request_error');
    const huge = messagesBody('openai/mock-model', { messages: [{ role: 'user', content: 'x'.repeat(8 * 1024) }] });
    expectAnthropicEnvelope(await rawRequest(url, { headers: bearer(), body: huge }), 413, 'request_too_large');
    const noMax = await rejectionOf(
      client.messages.create({ model: 'openai/mock-model', messages: [{ role: 'user', content: 'x' }] } as never),
    );
    expect(expectSdkError(noMax, Anthropic.BadRequestError, 400, 'invalid_request_error').apiMessage).toContain('max_tokens');
    const documentBlock = { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } };
    const unsupported = messagesBody('openai/mock-model', { messages: [{ role: 'user', content: [documentBlock] }] });
    const reply = expectAnthropicEnvelope(await rawRequest(url, { headers: bearer(), body: unsupported }), 400, 'invalid_request_error');
    expect(reply.error.message).toContain('document');
  });

  it('keeps the dialect to /v1/messages: unknown methods there are Anthropic 404s, chat errors stay the gateway envelope', async () => {
    expectAnthropicEnvelope(await rawRequest(url, { headers: bearer() }), 404, 'not_found_error');
    const chat = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('no-such-model') });
    expectEnvelope(chat, { status: 404, type: 'not_found_error', code: 'model_not_found' });
  });

  it('ends a stream the upstream breaks with an error event (APIError) and meters it as failed', async () => {
    const stream = await client.messages.create({ ...messagesBody('openai-broken/mock-model'), stream: true } as never).withResponse();
    const events: string[] = [];
    const thrown = await rejectionOf(
      (async () => {
        for await (const event of stream.data as unknown as AsyncIterable<{ type: string }>) events.push(event.type);
      })(),
    );
    expect(thrown).toBeInstanceOf(Anthropic.APIError);
    expect((thrown as InstanceType<typeof Anthropic.APIError>).type).toBe('api_error');
    expect(events).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
    const record = await usageRecordOf(storage, stream.response.headers.get('x-request-id') ?? '');
    expect(record).toMatchObject({ endpoint: '/v1/messages', provider: 'openai-broken', status: 502 });
    const raw = await rawRequest(url, { headers: bearer(), body: { ...messagesBody('openai-broken/mock-model'), stream: true } });
    const frames = parseAnthropicSse(raw.text);
    expect(frames.at(-1)).toMatchObject({ event: 'error', data: { error: { type: 'api_error' } } });
  });
});
