import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, chatBody, parseJson, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }];
const errorModels = ['error-500', 'error-503', 'error-429', 'error-401', 'error-404', 'error-400', 'forbidden-model', 'garbage-model'];

describe('error envelopes', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let client: OpenAI;
  let chatUrl: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const models = ['mock-model', ...errorModels].join(',');
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: models, BODY_SIZE_LIMIT: '2KB', LOG_LEVEL: 'debug' }) });
    client = openAIClient(gateway);
    mock.setBehavior('forbidden-model', { kind: 'error', status: 403 });
    mock.setBehavior('garbage-model', { kind: 'error', status: 200, body: 'this is not JSON' });
    chatUrl = `${gateway.url}/v1/chat/completions`;
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  const createChat = (model: string, target: OpenAI = client) => target.chat.completions.create({ model, messages });

  describe('authentication', () => {
    it('refuses a request without credentials with a 401 envelope from the gateway', async () => {
      const reply = await rawRequest(chatUrl, { body: chatBody('openai/mock-model') });
      expectEnvelope(reply, { status: 401, type: 'authentication_error', param: null });
    });

    it('refuses a wrong key: the openai client sees an AuthenticationError', async () => {
      const thrown = await rejectionOf(createChat('openai/mock-model', openAIClient(gateway, 'wrong-key')));
      expect(thrown).toBeInstanceOf(OpenAI.AuthenticationError);
      expectClientError(thrown, { status: 401, type: 'authentication_error' });
      const reply = await rawRequest(chatUrl, { headers: bearer('wrong-key'), body: chatBody('openai/mock-model') });
      const error = expectEnvelope(reply, { status: 401, type: 'authentication_error', param: null });
      expect(error.message).not.toContain('wrong-key');
      const basic = await rawRequest(chatUrl, { headers: { authorization: `Basic ${MASTER_KEY}` }, body: chatBody('openai/mock-model') });
      expectEnvelope(basic, { status: 401, type: 'authentication_error' });
    });

    it('accepts the key in x-api-key when there is no Authorization header', async () => {
      const accepted = await rawRequest(chatUrl, { headers: { 'x-api-key': MASTER_KEY }, body: chatBody('openai/mock-model') });
      expect(accepted.status, accepted.text).toBe(200);
      const refused = await rawRequest(chatUrl, { headers: { 'x-api-key': 'wrong-key' }, body: chatBody('openai/mock-model') });
      expectEnvelope(refused, { status: 401, type: 'authentication_error' });
      // x-api-key is only read when there is no Authorization header.
      const shadowed = await rawRequest(chatUrl, {
        headers: { ...bearer('wrong-key'), 'x-api-key': MASTER_KEY },
        body: chatBody('openai/mock-model'),
      });
      expectEnvelope(shadowed, { status: 401, type: 'authentication_error' });
    });

    it('serves /health without credentials but wants them for /v1/models', async () => {
      const health = await rawRequest(`${gateway.url}/health`);
      expect(health.status).toBe(200);
      expect(parseJson(health.text)).toEqual({ status: 'ok' });
      const models = await rawRequest(`${gateway.url}/v1/models`);
      expectEnvelope(models, { status: 401, type: 'authentication_error' });
      const authorised = await rawRequest(`${gateway.url}/v1/models`, { headers: bearer() });
      expect(authorised.status).toBe(200);
    });
  });

  describe('routing', () => {
    it('answers an unknown model with 404 not_found_error, code model_not_found', async () => {
      const thrown = await rejectionOf(createChat('openai/no-such-model'));
      expect(thrown).toBeInstanceOf(OpenAI.NotFoundError);
      expectClientError(thrown, { status: 404, type: 'not_found_error', code: 'model_not_found' });
      const bare = await rawRequest(chatUrl, { headers: bearer(), body: chatBody('no-such-model') });
      expectEnvelope(bare, { status: 404, type: 'not_found_error', code: 'model_not_found' });
    });

    it('answers an unknown provider hint with 400, code unknown_provider', async () => {
      const params: ChatCompletionCreateParamsNonStreaming & { provider: string } = { model: 'mock-model', messages, provider: 'nowhere' };
      const thrown = await rejectionOf(client.chat.completions.create(params));
      expect(thrown).toBeInstanceOf(OpenAI.BadRequestError);
      expectClientError(thrown, { status: 400, type: 'invalid_request_error', code: 'unknown_provider' });
    });

    it('answers an unknown route with a 404 not_found_error envelope', async () => {
      const unknown = await rawRequest(`${gateway.url}/no-such-route`, { headers: bearer() });
      expectEnvelope(unknown, { status: 404, type: 'not_found_error' });
      const unknownV1 = await rawRequest(`${gateway.url}/v1/no-such-route`, { headers: bearer(), body: {} });
      expectEnvelope(unknownV1, { status: 404, type: 'not_found_error' });
    });
  });

  describe('upstream errors', () => {
    it('maps an upstream 500 to provider_error 500 from the instance, keeping the message', async () => {
      const thrown = await rejectionOf(createChat('openai/error-500'));
      expect(thrown).toBeInstanceOf(OpenAI.InternalServerError);
      const error = expectClientError(thrown, { status: 500, type: 'provider_error', provider: 'openai' });
      expect(error.message).toContain('mock upstream error 500');
      const reply = await rawRequest(chatUrl, { headers: bearer(), body: chatBody('openai/error-500') });
      expectEnvelope(reply, { status: 500, type: 'provider_error', provider: 'openai' });
    });

    it('maps an upstream 429 to rate_limit_error 429 and passes Retry-After through', async () => {
      const thrown = await rejectionOf(createChat('openai/error-429'));
      expect(thrown).toBeInstanceOf(OpenAI.RateLimitError);
      expectClientError(thrown, { status: 429, type: 'rate_limit_error', provider: 'openai' });
      const reply = await rawRequest(chatUrl, { headers: bearer(), body: chatBody('openai/error-429') });
      expectEnvelope(reply, { status: 429, type: 'rate_limit_error', provider: 'openai' });
      const upstream = await rawRequest(`${mock.url}/chat/completions`, { body: chatBody('error-429') });
      expect(upstream.headers['retry-after']).toBeDefined();
      expect(reply.headers['retry-after']).toBe(upstream.headers['retry-after']);
    });

    it('maps an upstream 429 on a streaming request to a 429 before any stream starts', async () => {
      const thrown = await rejectionOf(client.chat.completions.create({ model: 'openai/error-429', messages, stream: true }));
      expect(thrown).toBeInstanceOf(OpenAI.RateLimitError);
      expectClientError(thrown, { status: 429, type: 'rate_limit_error', provider: 'openai' });
    });

    it('maps an upstream 401 to authentication_error from the instance', async () => {
      const thrown = await rejectionOf(createChat('openai/error-401'));
      expect(thrown).toBeInstanceOf(OpenAI.AuthenticationError);
      expectClientError(thrown, { status: 401, type: 'authentication_error', provider: 'openai' });
    });

    it('maps an upstream 404 to not_found_error from the instance', async () => {
      const thrown = await rejectionOf(createChat('openai/error-404'));
      expect(thrown).toBeInstanceOf(OpenAI.NotFoundError);
      expectClientError(thrown, { status: 404, type: 'not_found_error', provider: 'openai' });
    });

    it('maps an upstream 400 to invalid_request_error 400 from the instance', async () => {
      const thrown = await rejectionOf(createChat('openai/error-400'));
      expect(thrown).toBeInstanceOf(OpenAI.BadRequestError);
      const error = expectClientError(thrown, { status: 400, type: 'invalid_request_error', provider: 'openai' });
      expect(error.message).toContain('mock upstream error 400');
    });

    it('maps an upstream 503 to provider_error 503 and an upstream 403 to authentication_error', async () => {
      const unavailable = await rawRequest(chatUrl, { headers: bearer(), body: chatBody('openai/error-503') });
      expectEnvelope(unavailable, { status: 503, type: 'provider_error', provider: 'openai' });
      const forbidden = await rawRequest(chatUrl, { headers: bearer(), body: chatBody('openai/forbidden-model') });
      expectEnvelope(forbidden, { status: 403, type: 'authentication_error', provider: 'openai' });
    });

    it('answers an upstream 200 whose body is not JSON with provider_error 502', async () => {
      const reply = await rawRequest(chatUrl, { headers: bearer(), body: chatBody('openai/garbage-model') });
      expectEnvelope(reply, { status: 502, type: 'provider_error', provider: 'openai' });
    });
  });

  describe('bad input', () => {
    it('answers malformed JSON with 400, code invalid_json', async () => {
      const reply = await rawRequest(chatUrl, { headers: bearer(), body: '{"model": "openai/mock-model", "messages": [' });
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'invalid_json' });
    });

    it('answers a JSON array body with 400 invalid_request_error', async () => {
      const reply = await rawRequest(chatUrl, { headers: bearer(), body: [chatBody('openai/mock-model')] });
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error' });
    });

    it('answers a body over BODY_SIZE_LIMIT with 413 invalid_request_error', async () => {
      const big = chatBody('openai/mock-model', { messages: [{ role: 'user', content: 'x'.repeat(10 * 1024) }] });
      const reply = await rawRequest(chatUrl, { headers: bearer(), body: big });
      expectEnvelope(reply, { status: 413, type: 'invalid_request_error' });
      const small = await rawRequest(chatUrl, { headers: bearer(), body: chatBody('openai/mock-model') });
      expect(small.status, small.text).toBe(200);
    });

    it('answers a missing model with 400, param model', async () => {
      const reply = await rawRequest(chatUrl, { headers: bearer(), body: { messages } });
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', param: 'model' });
    });

    it('answers missing messages with 400, param messages', async () => {
      const reply = await rawRequest(chatUrl, { headers: bearer(), body: { model: 'openai/mock-model' } });
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', param: 'messages' });
    });

    it('answers a user path with a .. segment with 400 invalid_request_error', async () => {
      const reply = await rawRequest(chatUrl, {
        headers: { ...bearer(), 'x-user-path': '/team/../admin' },
        body: chatBody('openai/mock-model'),
      });
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error' });
    });

    it('answers a body that is not JSON at all with 400', async () => {
      const reply = await rawRequest(chatUrl, { headers: { ...bearer(), 'content-type': 'text/plain' }, body: 'hello' });
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'invalid_json' });
    });
  });

  it('still answers /health and serves chat after all of the above', async () => {
    const health = await rawRequest(`${gateway.url}/health`);
    expect(health.status).toBe(200);
    expect(parseJson(health.text)).toEqual({ status: 'ok' });
    const completion = await createChat('openai/mock-model');
    expect(completion.choices[0]?.message.content).toBeTruthy();
    expect(gateway.child.exitCode).toBeNull();
  });

  it('never wrote a secret to its log, even at debug level', () => {
    const log = gateway.output.join('\n');
    expect(gateway.output.length).toBeGreaterThan(5);
    expect(log).toContain('request completed');
    for (const secret of [MASTER_KEY, UPSTREAM_KEY, 'wrong-key']) expect(log).not.toContain(secret);
  });
});
