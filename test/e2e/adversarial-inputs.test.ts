import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { countTokens } from '../../src/core/tokenizer.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, parseJson, type RawReply, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 27 item 2: token estimates are linear in the input and bounded (count_tokens for a
// model without a native count, Gemini :countTokens, the max_input_tokens guardrail). The
// assertions are on results; the time the gateway takes is measured by `npm run bench`.

const word = 'a'.repeat(1 << 20); // 1 MB, no separator

describe('adversarial inputs to token estimates', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const configYaml = [
      'guardrails:',
      '  - name: size',
      '    type: max_input_tokens',
      '    max_tokens: 1000',
      '    applies_to: { user_paths: [/capped] }',
    ].join('\n');
    gateway = await startGateway({ env: gatewayEnv(mock, { BODY_SIZE_LIMIT: '4MB' }), configYaml });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  /** `request` with /health asked while it runs: both answer. */
  async function withHealth(request: Promise<RawReply>): Promise<RawReply> {
    const health = rawRequest(`${gateway.url}/health`);
    const [reply, healthReply] = await Promise.all([request, health]);
    expect(healthReply.status).toBe(200);
    return reply;
  }

  it('counts a 1 MB word on /v1/messages/count_tokens (estimated instance): the bounded count', async () => {
    const reply = await withHealth(
      rawRequest(`${gateway.url}/v1/messages/count_tokens`, {
        headers: bearer(),
        body: { model: 'mock-model', messages: [{ role: 'user', content: word }] },
      }),
    );
    expect(reply.status, reply.text).toBe(200);
    expect(parseJson(reply.text)['input_tokens']).toBe((await countTokens([word])) + 4); // + framing of one message
  }, 30_000);

  it('counts a 1 MB word on Gemini :countTokens', async () => {
    const reply = await withHealth(
      rawRequest(`${gateway.url}/v1beta/models/openai/mock-model:countTokens`, {
        headers: { 'x-goog-api-key': 'test-master-key' },
        body: { contents: [{ role: 'user', parts: [{ text: word }] }] },
      }),
    );
    expect(reply.status, reply.text).toBe(200);
    expect(parseJson(reply.text)['totalTokens']).toBe(await countTokens([word]));
  }, 30_000);

  it('blocks a 1 MB word at max_input_tokens, and passes a short one', async () => {
    const send = (content: string) =>
      rawRequest(`${gateway.url}/v1/chat/completions`, {
        headers: { ...bearer(), 'x-user-path': '/capped' },
        body: { model: 'mock-model', messages: [{ role: 'user', content }] },
      });
    const blocked = await withHealth(send(word));
    expect(blocked.status, blocked.text).toBe(400);
    expect(blocked.headers['x-guardrail-blocked']).toBe('size');
    expect((await send('a short one')).status).toBe(200);
  }, 30_000);
});
