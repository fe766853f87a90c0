import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { call, callJson, chatBody, parseJson, rawRequest } from '../support/http.ts';
import { type MockGemini, startMockGemini } from '../support/mock-gemini.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 27 items 5 and 12: an allowlist is checked against what is executed. An entry naming a
// virtual model opens that virtual model only (not a concrete model of its name, however it is
// named); the passthrough checks the model wherever the provider's path carries it, and an
// account-wide resource (files, batches) through /p needs its own endpoint allowlist entry.

const GEMINI_KEY = 'gemini-allowlist-key';
const generate = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };

describe('allowlists on what is executed', () => {
  let mock: MockUpstream;
  let gemini: MockGemini;
  let gateway: GatewayProcess;

  const key = async (body: Record<string, unknown>): Promise<string> =>
    (await callJson(gateway, '/admin/api-keys', 201, { body: { name: 'tenant', ...body } }))['key'] as string;
  const upstreamModels = (): unknown[] =>
    mock.requests
      .filter((request) => request.method === 'POST')
      .map((request) => (request.body as Record<string, unknown> | null)?.['model']);
  const refused = { status: 403, type: 'permission_error', code: 'model_not_allowed' } as const;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gemini = await startMockGemini(GEMINI_KEY);
    const configYaml = `
providers:
  openai:
    type: openai
    api_key: ${UPSTREAM_KEY}
    base_url: ${mock.url}
    models: [mock-model, smart]
  gem:
    type: gemini
    api_key: ${GEMINI_KEY}
    base_url: ${gemini.url}
    models: [gemini-2.5-flash, gemini-tool]
virtual_models:
  - name: smart
    target: openai/mock-model
`;
    gateway = await startGateway({ configYaml, env: gatewayEnv(mock) });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
    await gemini?.close();
  });

  it('a virtual-model entry does not open the concrete model of the same name, by prefix or provider hint', async () => {
    const token = await key({ allowed_models: ['smart'] });
    mock.reset();
    const virtual = await call(gateway, '/v1/chat/completions', { token, body: chatBody('smart') });
    expect(virtual.status, virtual.text).toBe(200);
    expect(upstreamModels()).toEqual(['mock-model']);
    mock.reset();
    const prefixed = await call(gateway, '/v1/chat/completions', { token, body: chatBody('openai/smart') });
    expectEnvelope(prefixed, refused);
    const hinted = await call(gateway, '/v1/chat/completions', { token, body: { ...chatBody('smart'), provider: 'openai' } });
    expectEnvelope(hinted, refused);
    const embeddings = await call(gateway, '/v1/embeddings', { token, body: { model: 'openai/smart', input: 'x' } });
    expectEnvelope(embeddings, refused);
    const responses = await call(gateway, '/v1/responses', { token, body: { model: 'smart', provider: 'openai', input: 'x' } });
    expectEnvelope(responses, refused);
    const messages = await call(gateway, '/v1/messages', {
      token,
      body: { model: 'openai/smart', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(messages.status, messages.text).toBe(403);
    const gemini = await call(gateway, '/v1beta/models/openai%2Fsmart:generateContent', { token, body: generate });
    expect(gemini.status, gemini.text).toBe(403);
    const others: Array<[string, Record<string, unknown>]> = [
      ['/v1/completions', { model: 'openai/smart', prompt: 'hi' }],
      ['/v1/images/generations', { model: 'smart', provider: 'openai', prompt: 'a cat' }],
      ['/v1/audio/speech', { model: 'openai/smart', input: 'hi', voice: 'alloy' }],
      ['/v1/messages/count_tokens', { model: 'openai/smart', messages: [{ role: 'user', content: 'hi' }] }],
    ];
    for (const [path, body] of others) {
      const reply = await call(gateway, path, { token, body });
      expect(reply.status, `${path}: ${reply.text}`).toBe(403);
      expect(reply.text).toContain('openai/smart');
    }
    expect((await call(gateway, '/v1/models/openai%2Fsmart', { token })).status).toBe(404);
    const passthrough = await call(gateway, '/p/openai/chat/completions', { token, body: chatBody('smart') });
    expectEnvelope(passthrough, refused);
    expect(upstreamModels()).toEqual([]);
    const listed = parseJson((await call(gateway, '/v1/models', { token })).text)['data'] as Array<{ id: string }>;
    expect(listed.map((model) => model.id)).toEqual(['smart']);
  });

  it('passthrough: the model in a Gemini path is checked, and the body model too', async () => {
    const token = await key({ allowed_models: ['gem/gemini-2.5-flash'] });
    gemini.requests.length = 0;
    const pathModel = await call(gateway, '/p/gem/models/gemini-tool:generateContent', {
      token,
      body: { ...generate, model: 'gemini-2.5-flash' },
    });
    expectEnvelope(pathModel, refused);
    expect(pathModel.text).toContain('gem/gemini-tool');
    for (const method of ['streamGenerateContent?alt=sse', 'countTokens', 'embedContent', 'batchEmbedContents', 'predict']) {
      expectEnvelope(await call(gateway, `/p/gem/models/gemini-tool:${method}`, { token, body: generate }), refused);
    }
    const encoded = await call(gateway, '/p/gem/v1beta/models/gemini%2Dtool%3AgenerateContent', { token, body: generate });
    expectEnvelope(encoded, refused);
    const bodyModel = await call(gateway, '/p/gem/models/gemini-2.5-flash:generateContent', {
      token,
      body: { ...generate, model: 'gemini-tool' },
    });
    expectEnvelope(bodyModel, refused);
    // A custom method that runs a model the gateway cannot name needs the instance wildcard.
    expectEnvelope(await call(gateway, '/p/gem/tunedModels/mine:generateContent', { token, body: generate }), refused);
    expect(gemini.requests).toEqual([]);
    const allowed = await call(gateway, '/p/gem/models/gemini-2.5-flash:generateContent', { token, body: generate });
    expect(allowed.status, allowed.text).toBe(200);
    expect(gemini.requests.map((request) => request.path)).toEqual(['/v1beta/models/gemini-2.5-flash:generateContent']);
  });

  it('passthrough: an OpenAI-style call whose body model cannot be read needs the instance wildcard', async () => {
    const token = await key({ allowed_models: ['openai/mock-model'] });
    mock.reset();
    // Upstreams read JSON whatever the content type says: so does the check.
    const plain = await rawRequest(`${gateway.url}/p/openai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body: JSON.stringify(chatBody('mock-other')),
    });
    expectEnvelope(plain, refused);
    const unreadable = await call(gateway, '/p/openai/chat/completions', { token, body: { messages: [] } });
    expectEnvelope(unreadable, refused);
    const other = await call(gateway, '/p/openai/fine_tuning/jobs', { token, body: { model: 'mock-model' } });
    expectEnvelope(other, refused);
  });

  it('passthrough to files and batches needs them in the endpoint allowlist (403 endpoint_not_allowed)', async () => {
    const passthroughOnly = await key({ allowed_endpoints: ['/p'] });
    const endpointRefused = { status: 403, type: 'permission_error', code: 'endpoint_not_allowed' } as const;
    mock.reset();
    for (const path of ['/p/openai/v1/files', '/p/openai/files/file-abc/content', '/p/openai/v1/batches', '/p/openai/%66iles']) {
      expectEnvelope(await call(gateway, path, { token: passthroughOnly }), endpointRefused);
    }
    expectEnvelope(await call(gateway, '/p/openai/v1/batches', { token: passthroughOnly, body: { input_file_id: 'f' } }), endpointRefused);
    expectEnvelope(await call(gateway, '/p/openai/v1/uploads', { token: passthroughOnly, body: { purpose: 'batch' } }), endpointRefused);
    expect(mock.requests).toEqual([]);
    const chat = await call(gateway, '/p/openai/chat/completions', { token: passthroughOnly, body: chatBody('mock-model') });
    expect(chat.status, chat.text).toBe(200);
    const withFiles = await key({ allowed_endpoints: ['/p', '/v1/files'] });
    // Past the endpoint allowlist, the owner rule answers (ADR 28): an id the tenant does not own is unknown.
    const files = await call(gateway, '/p/openai/v1/files/file-unknown', { token: withFiles });
    expectEnvelope(files, { status: 404, type: 'not_found_error', code: 'file_not_found' });
    expectEnvelope(await call(gateway, '/p/openai/v1/batches', { token: withFiles }), endpointRefused);
  });
});
