import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

import { adminUsage } from '../support/admin.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { call, chatBody, parseJson, type RawReply, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { backendNames, createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { eventually } from '../support/wait.ts';

// Issue 27 item 14: a `model` over 256 characters is 400 `model_name_too_long` on every model
// endpoint, before anything is planned, sent upstream or stored; `user` and `metadata` have
// caps of their own; what the request log and usage records keep is bounded.

const long = 'x'.repeat(400 * 1024);
const tooLong = { status: 400, type: 'invalid_request_error', code: 'model_name_too_long' } as const;

function multipart(fields: Record<string, string>): { body: string; contentType: string } {
  const boundary = 'gateway-test-boundary';
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  const file = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF\r\n`;
  return { body: `${parts.join('')}${file}--${boundary}--\r\n`, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The HTTP answer that refuses a realtime upgrade. */
function realtimeRefusal(gateway: GatewayProcess, query: string): Promise<RawReply> {
  const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/v1/realtime?${query}`, [], {
    headers: { authorization: `Bearer ${MASTER_KEY}` },
  });
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      socket.close();
      reject(new Error('the session was accepted'));
    });
    socket.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString() }),
      );
    });
    socket.once('error', reject);
  });
}

describe.each(backendNames)('bounded stored fields (%s)', (backendName) => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createGatewayDatabase(backendName);
    const env = gatewayEnv(mock, { OPENAI_MODELS: 'mock-model', USAGE_FLUSH_INTERVAL_MS: '100', ...database.env });
    gateway = await startGateway({ env });
  });

  afterAll(async () => {
    await gateway?.stop();
    await database?.dispose();
    await mock?.close();
  });

  it('a 400 KB model is refused on every model endpoint, and nothing of it is stored', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const requests: Array<[string, unknown]> = [
      ['/v1/chat/completions', chatBody(long)],
      ['/v1/completions', { model: long, prompt: 'hi' }],
      ['/v1/embeddings', { model: long, input: 'hi' }],
      ['/v1/responses', { model: long, input: 'hi' }],
      ['/v1/messages', { model: long, max_tokens: 8, messages }],
      ['/v1/messages/count_tokens', { model: long, messages }],
      ['/v1/images/generations', { model: long, prompt: 'a cat' }],
      ['/v1/audio/speech', { model: long, input: 'hi', voice: 'alloy' }],
      ['/v1/moderations', { model: long, input: 'hi' }],
      ['/v1/batches', { model: long, input_file_id: 'file-1', endpoint: '/v1/chat/completions', completion_window: '24h' }],
      ['/p/openai/chat/completions', chatBody(long)],
      ['/p/openai/embeddings', { model: long, input: 'hi' }],
    ];
    for (const [path, body] of requests) {
      const reply = await call(gateway, path, { body });
      // The Messages API answers in Anthropic's envelope.
      if (path.startsWith('/v1/messages')) {
        expect(reply.status, reply.text).toBe(400);
        expect(reply.text).toContain('at most 256 characters');
      } else expectEnvelope(reply, { ...tooLong, param: 'model' });
      expect(reply.text.length, path).toBeLessThan(2048);
    }
    const bearer = { authorization: `Bearer ${MASTER_KEY}` };
    // A JSON body under another content type, a form field, a Gemini path and a passthrough path.
    const plain = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'text/plain' },
      body: JSON.stringify(chatBody(long)),
    });
    expectEnvelope(plain, tooLong);
    const form = multipart({ model: 'y'.repeat(300) });
    const transcription = await rawRequest(`${gateway.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': form.contentType },
      body: form.body,
    });
    expectEnvelope(transcription, tooLong);
    const pathModel = 'z'.repeat(300);
    // The Gemini dialect answers in Google's envelope.
    const gemini = await call(gateway, `/v1beta/models/${pathModel}:generateContent`, { body: { contents: [] } });
    expect(gemini.status, gemini.text).toBe(400);
    expect(gemini.text).toContain('at most 256 characters');
    expectEnvelope(await call(gateway, `/p/openai/models/${pathModel}:generateContent`, { body: { contents: [] } }), tooLong);
    const passthroughForm = await rawRequest(`${gateway.url}/p/openai/audio/transcriptions`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': form.contentType },
      body: form.body,
    });
    expectEnvelope(passthroughForm, tooLong);
    expectEnvelope(await realtimeRefusal(gateway, `model=${'r'.repeat(300)}`), tooLong);
    expect(mock.requests).toEqual([]);
    // 256 characters are still a model name (this one is not served).
    const longest = await call(gateway, '/v1/chat/completions', { body: chatBody('w'.repeat(256)) });
    expectEnvelope(longest, { status: 404, type: 'not_found_error', code: 'model_not_found' });

    // The last request is logged once the others are (one writer, in order).
    const logged = await eventually(async () => {
      const reply = await call(gateway, '/admin/requests?limit=100');
      const data = parseJson(reply.text)['requests'] as Array<Record<string, unknown>>;
      return data.some((entry) => entry['model_requested'] === 'w'.repeat(256)) ? { text: reply.text, data } : undefined;
    }, 'the requests in the request log');
    expect(logged.text).not.toContain('x'.repeat(300));
    expect(logged.text).not.toContain('y'.repeat(300));
    const codes = logged.data.map((entry) => entry['error_code']);
    expect(codes.filter((code) => code === 'model_name_too_long').length).toBeGreaterThanOrEqual(12);
    for (const entry of logged.data) expect(String(entry['model_requested'] ?? '').length).toBeLessThanOrEqual(256);
    const usage = await adminUsage(gateway, { group_by: 'model' });
    expect([...usage.keys()]).toEqual([]);
  });

  it('user over 256 characters and metadata over its caps are refused before anything runs', async () => {
    mock.reset();
    const user = await call(gateway, '/v1/chat/completions', { body: { ...chatBody('mock-model'), user: 'u'.repeat(257) } });
    expectEnvelope(user, { status: 400, type: 'invalid_request_error', code: 'invalid_body', param: 'user' });
    const value = await call(gateway, '/v1/responses', { body: { model: 'mock-model', input: 'hi', metadata: { note: 'm'.repeat(513) } } });
    expectEnvelope(value, { status: 400, type: 'invalid_request_error', code: 'invalid_body', param: 'metadata' });
    const key = await call(gateway, '/v1/chat/completions', { body: { ...chatBody('mock-model'), metadata: { ['k'.repeat(65)]: 'v' } } });
    expectEnvelope(key, { status: 400, type: 'invalid_request_error', code: 'invalid_body', param: 'metadata' });
    expect(mock.requests).toEqual([]);
    const fine = await call(gateway, '/v1/chat/completions', {
      body: { ...chatBody('mock-model'), user: 'u'.repeat(256), metadata: { ['k'.repeat(64)]: 'm'.repeat(512), tags: ['a', 'b'] } },
    });
    expect(fine.status, fine.text).toBe(200);
  });
});
