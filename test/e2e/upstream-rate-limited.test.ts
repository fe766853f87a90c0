import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import OpenAI, { toFile } from 'openai';

import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, parseJson, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 14.4: an upstream 429 keeps the upstream's Retry-After and retry-after-ms headers and
// gets the code `upstream_rate_limited`, on every path that calls an upstream.

const model = 'openai/mock-model';
const messages = [{ role: 'user', content: 'hi' }];
const paths: Array<[string, Record<string, unknown>]> = [
  ['/v1/chat/completions', { model, messages }],
  ['/v1/chat/completions', { model, messages, stream: true }],
  ['/v1/responses', { model, input: 'hi' }],
  ['/v1/embeddings', { model, input: 'hi' }],
  ['/v1/audio/speech', { model, input: 'hi', voice: 'alloy' }],
];

describe('upstream 429', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.route('POST', '/*', (_request, response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3', 'retry-after-ms': '2500' });
      response.end(
        JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }),
      );
    });
    gateway = await startGateway({ env: gatewayEnv(mock, { UPSTREAM_RETRIES: '0' }), startTimeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it.each(paths)('%s keeps retry-after and retry-after-ms and has a code', async (path, body) => {
    const reply = await rawRequest(`${gateway.url}${path}`, { headers: bearer(), body });
    const error = expectEnvelope(reply, { status: 429, type: 'rate_limit_error', provider: 'openai' });
    expect(error.code).toBe('upstream_rate_limited');
    expect(error.message).toBe('Rate limit reached for requests');
    expect(reply.headers['retry-after']).toBe('3');
    expect(reply.headers['retry-after-ms']).toBe('2500');
  });

  it('/v1/messages keeps both headers in the Anthropic dialect', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/messages`, { headers: bearer(), body: { model, max_tokens: 10, messages } });
    expect(reply.status, reply.text).toBe(429);
    expect(parseJson(reply.text)).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(reply.headers['retry-after']).toBe('3');
    expect(reply.headers['retry-after-ms']).toBe('2500');
  });

  it('a file upload (relayed, multipart) gets the same 429', async () => {
    const thrown = await rejectionOf(
      openAIClient(gateway).files.create({ file: await toFile(Buffer.from('{}\n'), 'in.jsonl'), purpose: 'batch' }),
    );
    expectClientError(thrown, { status: 429, type: 'rate_limit_error', provider: 'openai', code: 'upstream_rate_limited' });
    expect((thrown as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after-ms')).toBe('2500');
  });

  it('passthrough relays the upstream 429 with its headers as they are', async () => {
    const reply = await rawRequest(`${gateway.url}/p/openai/chat/completions`, {
      headers: bearer(),
      body: { model: 'mock-model', messages },
    });
    expect(reply.status).toBe(429);
    expect(reply.headers['retry-after']).toBe('3');
    expect(reply.headers['retry-after-ms']).toBe('2500');
  });

  it('the openai SDK sees a RateLimitError with the code and the retry-after-ms header', async () => {
    const thrown = await rejectionOf(openAIClient(gateway).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }));
    expect(thrown).toBeInstanceOf(OpenAI.RateLimitError);
    expectClientError(thrown, { status: 429, type: 'rate_limit_error', provider: 'openai', code: 'upstream_rate_limited' });
    expect((thrown as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after-ms')).toBe('2500');
  });
});
