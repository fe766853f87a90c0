import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectAnthropicEnvelope, expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, chatBody, parseJson, rawRequest } from '../support/http.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, usageRecordOf } from '../support/storage.ts';

// Issue 15 defect 1: one key must not switch a provider off for everyone. A body nested
// deeper than 128 levels is a 400 `body_too_deep` on every JSON route before anything else
// happens, and an error the gateway raises itself before calling the upstream (here a
// RangeError on a deeply nested tool-call argument, which passes the body bound because it
// is a string) never counts against the instance's circuit breaker.
// Failed attempts are recorded with the status the client gets (500 for an internal error,
// 504 for a passthrough timeout), not a blanket 502.

const ANTHROPIC_KEY = 'sk-ant-upstream-key';
const DEPTH = 10_000;
const deep = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

/** A chat body of about 20 KB whose `messages` content nests DEPTH arrays. */
const deepChatBody = (model: string): string => `{"model":"${model}","messages":[{"role":"user","content":${deep(DEPTH)}}]}`;

/** A valid chat body whose assistant tool call carries arguments nested DEPTH levels (a string). */
function deepArgumentsBody(model: string): Record<string, unknown> {
  const call = { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: `{"a":${deep(DEPTH)}}` } };
  return {
    model,
    messages: [
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: 'done' },
    ],
  };
}

describe('deeply nested request bodies', () => {
  let openai: MockUpstream;
  let anthropic: MockAnthropic;
  let gateway: GatewayProcess;
  let userKey: string;

  beforeAll(async () => {
    openai = await startMockUpstream();
    anthropic = await startMockAnthropic({ apiKey: ANTHROPIC_KEY, models: ['claude-sonnet-4-5'] });
    const configYaml = [
      'providers:',
      '  claude:',
      '    type: anthropic',
      `    api_key: ${ANTHROPIC_KEY}`,
      `    base_url: ${anthropic.url}`,
      '',
    ].join('\n');
    gateway = await startGateway({
      env: { MASTER_KEY, OPENAI_API_KEY: UPSTREAM_KEY, OPENAI_BASE_URL: openai.url, UPSTREAM_RETRIES: '0', UPSTREAM_TIMEOUT_SECONDS: '2' },
      configYaml,
    });
    const created = await rawRequest(`${gateway.url}/admin/api-keys`, { headers: bearer(), body: { name: 'another user' } });
    expect(created.status, created.text).toBe(201);
    userKey = String(parseJson(created.text)['key']);
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await openai?.close();
    await anthropic?.close();
  });

  it('five deep chat requests get 400 body_too_deep, reach no upstream, and the next user is served', async () => {
    for (let index = 0; index < 5; index += 1) {
      const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: deepChatBody('openai/mock-model') });
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'body_too_deep' });
    }
    expect(openai.requests.filter((recorded) => recorded.method === 'POST')).toHaveLength(0);
    const normal = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(userKey),
      body: chatBody('openai/mock-model'),
    });
    expect(normal.status, normal.text).toBe(200);
  });

  it('every JSON route refuses a deep body the same way, whatever the content type', async () => {
    const body = `{"model":"openai/mock-model","input":${deep(DEPTH)}}`;
    for (const path of ['/v1/responses', '/v1/embeddings', '/admin/api-keys', '/admin/rate-limits/reset']) {
      const reply = await rawRequest(`${gateway.url}${path}`, { headers: bearer(), body });
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'body_too_deep' });
    }
    // A route that also reads JSON sent as another type (curl's default form type).
    const form = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'content-type': 'application/x-www-form-urlencoded' },
      body: deepChatBody('openai/mock-model'),
    });
    expectEnvelope(form, { status: 400, type: 'invalid_request_error', code: 'body_too_deep' });
    const messages = await rawRequest(`${gateway.url}/v1/messages`, {
      headers: bearer(),
      body: `{"model":"openai/mock-model","max_tokens":5,"messages":[{"role":"user","content":${deep(DEPTH)}}]}`,
    });
    expectAnthropicEnvelope(messages, 400, 'invalid_request_error');
  });

  it('128 levels are accepted; 129 are not', async () => {
    const nested = (depth: number): string =>
      `{"model":"openai/mock-model","messages":[{"role":"user","content":"hi"}],"metadata_x":${deep(depth)}}`;
    // The body itself is 1 level, the array chain the rest.
    const accepted = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: nested(127) });
    expect(accepted.status, accepted.text).toBe(200);
    const refused = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: nested(128) });
    expectEnvelope(refused, { status: 400, type: 'invalid_request_error', code: 'body_too_deep' });
  });

  it("errors the gateway raises before calling an instance never open that instance's circuit", async () => {
    for (let index = 0; index < 6; index += 1) {
      const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        headers: bearer(),
        body: deepArgumentsBody('claude/claude-sonnet-4-5'),
      });
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'body_too_deep' });
      expect(parseJson(reply.text)['error']).toMatchObject({ provider: 'gateway' });
    }
    expect(anthropic.requests.filter((recorded) => recorded.method === 'POST')).toHaveLength(0);
    const normal = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(userKey),
      body: chatBody('claude/claude-sonnet-4-5'),
    });
    expect(normal.status, normal.text).toBe(200);
    const models = await rawRequest(`${gateway.url}/admin/models`, { headers: bearer() });
    const rows = JSON.parse(models.text) as Array<Record<string, unknown>>;
    expect(rows.find((row) => row['id'] === 'claude/claude-sonnet-4-5')?.['circuit']).toBe('closed');
  });

  it('an internal error during an attempt is answered and recorded as 500, not as an upstream 502', async () => {
    // The upstream's tool input nests DEPTH levels: JSON.stringify of it (answer conversion) throws a RangeError.
    anthropic.route('POST', '/messages', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        `{"id":"msg_deep","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"a":${deep(DEPTH)}}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":4}}`,
      );
    });
    const requestId = 'req-internal-error-status';
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'x-request-id': requestId },
      body: chatBody('claude/claude-sonnet-4-5'),
    });
    expectEnvelope(reply, { status: 500, type: 'internal_error', code: null });
    const storage = await (await createGatewayDatabase('sqlite')).open(gateway);
    try {
      expect((await usageRecordOf(storage, requestId)).status).toBe(500);
    } finally {
      await storage.close();
    }
  });

  it('a passthrough call that times out is recorded as the 504 the client gets, not 502', async () => {
    const requestId = 'req-passthrough-timeout-status';
    const reply = await rawRequest(`${gateway.url}/p/openai/chat/completions`, {
      headers: { ...bearer(), 'x-request-id': requestId },
      body: chatBody('hang'),
    });
    expectEnvelope(reply, { status: 504, type: 'provider_error', code: 'upstream_timeout', provider: 'openai' });
    const storage = await (await createGatewayDatabase('sqlite')).open(gateway);
    try {
      expect((await usageRecordOf(storage, requestId)).status).toBe(504);
    } finally {
      await storage.close();
    }
  });

  it('deep tool-call arguments in a Responses request to an Anthropic instance are a 400, not a 500', async () => {
    const input = [
      { role: 'user', content: 'look it up' },
      { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: `{"a":${deep(DEPTH)}}` },
      { type: 'function_call_output', call_id: 'call_1', output: 'done' },
    ];
    const reply = await rawRequest(`${gateway.url}/v1/responses`, {
      headers: bearer(),
      body: { model: 'claude/claude-sonnet-4-5', input },
    });
    expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'body_too_deep' });
  });
});
