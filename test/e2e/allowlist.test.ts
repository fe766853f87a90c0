import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectClientError, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, chatBody, parseJson } from '../support/http.ts';
import { signingKey, signToken, type TestSigningKey } from '../support/mock-jwks.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 19: a caller's model allowlist (here from a JWT claim) is enforced on every model
// endpoint before anything is counted, and /v1/models lists only what it may use.

const issuer = 'https://login.example.test/';

describe('model allowlists', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let key: TestSigningKey;
  let narrow: string;
  let wildcard: string;

  const upstreamModels = (): unknown[] =>
    mock.requests
      .filter((request) => request.method === 'POST')
      .map((request) => (request.body as Record<string, unknown> | null)?.['model']);

  beforeAll(async () => {
    key = await signingKey('login-1', 'ES256');
    mock = await startMockUpstream();
    const configYaml = `
auth:
  jwt:
    issuers:
      - issuer: ${issuer}
        keys: [${JSON.stringify(key.publicJwk)}]
        audiences: [gateway]
        algorithms: [ES256]
        allowed_models_claim: models
virtual_models:
  - name: smart
    target: openai/mock-other
`;
    gateway = await startGateway({ configYaml, env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model,mock-other' }) });
    narrow = await signToken(key, { iss: issuer, aud: 'gateway', sub: 'nina', models: ['openai/mock-model', 'smart'] });
    wildcard = await signToken(key, { iss: issuer, aud: 'gateway', sub: 'walt', models: 'openai/*' });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  const client = (token: string) => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: token, maxRetries: 0, timeout: 10_000 });

  it('chat: an allowed model passes, another is 403 model_not_allowed and never reaches the upstream', async () => {
    const answer = await client(narrow).chat.completions.create({ model: 'mock-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.message.content).toBeTruthy();
    mock.reset();
    const thrown = await rejectionOf(
      client(narrow).chat.completions.create({ model: 'mock-other', messages: [{ role: 'user', content: 'hi' }] }),
    );
    const error = expectClientError(thrown, { status: 403, type: 'permission_error', code: 'model_not_allowed' });
    expect(error.message).toContain('openai/mock-other');
    expect(upstreamModels()).toEqual([]);
  });

  it('a virtual model that is allowed may use its targets, even ones outside the allowlist', async () => {
    mock.reset();
    const reply = await call(gateway, '/v1/chat/completions', { token: narrow, body: chatBody('smart') });
    expect(reply.status, reply.text).toBe(200);
    expect(upstreamModels()).toEqual(['mock-other']);
  });

  it('an instance wildcard allows its models, not a virtual model routed to them', async () => {
    expect((await call(gateway, '/v1/chat/completions', { token: wildcard, body: chatBody('openai/mock-other') })).status).toBe(200);
    const reply = await call(gateway, '/v1/chat/completions', { token: wildcard, body: chatBody('smart') });
    expectEnvelope(reply, { status: 403, type: 'permission_error', code: 'model_not_allowed' });
  });

  it('embeddings and responses are refused the same way', async () => {
    mock.reset();
    const embeddings = await call(gateway, '/v1/embeddings', { token: narrow, body: { model: 'mock-other', input: 'x' } });
    expectEnvelope(embeddings, { status: 403, type: 'permission_error', code: 'model_not_allowed' });
    const responses = await call(gateway, '/v1/responses', { token: narrow, body: { model: 'mock-other', input: 'x' } });
    expectEnvelope(responses, { status: 403, type: 'permission_error', code: 'model_not_allowed' });
    expect(upstreamModels()).toEqual([]);
    const allowed = await call(gateway, '/v1/responses', { token: narrow, body: { model: 'mock-model', input: 'x' } });
    expect(allowed.status, allowed.text).toBe(200);
  });

  it('messages (Anthropic dialect) are refused with 403 permission_error', async () => {
    mock.reset();
    const reply = await call(gateway, '/v1/messages', {
      token: narrow,
      body: { model: 'mock-other', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(reply.status, reply.text).toBe(403);
    expect(reply.text).toContain('permission_error');
    expect(upstreamModels()).toEqual([]);
  });

  it('passthrough needs <instance>/* or an allowed body model', async () => {
    mock.reset();
    const refused = await call(gateway, '/p/openai/chat/completions', { token: narrow, body: chatBody('mock-other') });
    expectEnvelope(refused, { status: 403, type: 'permission_error', code: 'model_not_allowed' });
    expect(upstreamModels()).toEqual([]);
    const allowed = await call(gateway, '/p/openai/chat/completions', { token: narrow, body: chatBody('mock-model') });
    expect(allowed.status, allowed.text).toBe(200);
    const any = await call(gateway, '/p/openai/chat/completions', { token: wildcard, body: chatBody('mock-other') });
    expect(any.status, any.text).toBe(200);
  });

  it('/v1/models lists only what the caller may use', async () => {
    const listed = parseJson((await call(gateway, '/v1/models', { token: narrow })).text)['data'] as Array<{ id: string }>;
    expect(listed.map((model) => model.id).sort()).toEqual(['openai/mock-model', 'smart']);
    const all = parseJson((await call(gateway, '/v1/models')).text)['data'] as Array<{ id: string }>;
    expect(all.map((model) => model.id).sort()).toEqual(['openai/mock-model', 'openai/mock-other', 'smart']);
  });

  it('/v1/models/{id} answers a model outside the allowlist with 404 model_not_found', async () => {
    expect((await client(narrow).models.retrieve('openai/mock-model')).owned_by).toBe('openai');
    expect((await client(narrow).models.retrieve('mock-model')).id).toBe('mock-model');
    expect((await client(narrow).models.retrieve('smart')).owned_by).toBe('virtual');
    for (const id of ['openai/mock-other', 'mock-other']) {
      const thrown = await rejectionOf(client(narrow).models.retrieve(id));
      expectClientError(thrown, { status: 404, type: 'not_found_error', code: 'model_not_found' });
    }
    const virtual = await call(gateway, '/v1/models/smart', { token: wildcard });
    expectEnvelope(virtual, { status: 404, type: 'not_found_error', code: 'model_not_found' });
    expect((await call(gateway, '/v1/models/openai%2Fmock-other', { token: wildcard })).status).toBe(200);
  });

  it("the Gemini dialect's model lookup follows the allowlist too", async () => {
    expect((await call(gateway, '/v1beta/models/openai/mock-model', { token: narrow })).status).toBe(200);
    const refused = await call(gateway, '/v1beta/models/openai/mock-other', { token: narrow });
    expect(refused.status).toBe(404);
    expect(parseJson(refused.text)['error']).toMatchObject({ code: 404, status: 'NOT_FOUND' });
  });
});
