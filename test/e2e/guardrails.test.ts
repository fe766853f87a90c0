import type { ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { anthropicClient, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, runGatewayExpectingFailure, startGateway } from '../support/gateway-process.ts';
import { bearer, rawRequest } from '../support/http.ts';
import { type MockRequest, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 20: guardrails on every chat-shaped request (chat, responses, messages), on JSON
// answers and on streams, with the official clients against the built gateway.

const secret = `sk-proj-${'Q7'.repeat(20)}`;
const answers: Record<string, string> = {
  'pii-model': 'Write to jane.doe@example.com or pay with 4111 1111 1111 1111, bye.',
  'secret-model': `Here it is: ${secret} enjoy`,
  'mock-model': 'Hello there.',
};

const configYaml = `
guardrails:
  - name: pii-redact
    type: pii
  - name: no-secrets
    type: secrets
  - name: falcon
    type: deny_list
    terms: [project falcon]
  - name: watch
    type: deny_list
    mode: monitor
    terms: [watchword]
  - name: size
    type: max_input_tokens
    max_tokens: 200
    applies_to: { endpoints: [/v1/chat/completions] }
  - name: moderated
    type: moderation
    provider: openai
    categories: [violence]
    applies_to: { endpoints: [/v1/chat/completions] }
  - name: employee-ids
    type: custom
    module: ${resolve(import.meta.dirname, '../../examples/guardrails/employee-ids.mjs')}
    action: redact
`;

/** Chat answers chosen by model, streamed three characters per chunk; every request recorded. */
function chatHandler(received: unknown[]) {
  return (request: MockRequest, response: ServerResponse): void => {
    received.push(request.body);
    const body = request.body as { model: string; stream?: boolean };
    const text = answers[body.model] ?? 'ok';
    const base = { id: 'chatcmpl-1', created: 1, model: body.model };
    if (body.stream !== true) {
      response.writeHead(200, { 'content-type': 'application/json' });
      const usage = { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 };
      response.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage,
        }),
      );
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: Record<string, unknown>, finish: string | null): string =>
      `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    let wire = chunk({ role: 'assistant', content: '' }, null);
    for (let at = 0; at < text.length; at += 3) wire += chunk({ content: text.slice(at, at + 3) }, null);
    response.end(`${wire}${chunk({}, 'stop')}data: [DONE]\n\n`);
  };
}

const userText = (body: unknown): string => JSON.stringify((body as { messages: unknown }).messages);

describe('guardrails', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let client: OpenAI;
  let anthropic: Anthropic;
  const received: unknown[] = [];

  beforeAll(async () => {
    mock = await startMockUpstream({ models: Object.keys(answers) });
    mock.route('POST', '/chat/completions', chatHandler(received));
    mock.route('POST', '/moderations', (request, response) => {
      const violent = JSON.stringify(request.body).includes('attack plan');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: 'modr-1',
          model: 'omni-moderation-latest',
          results: [{ flagged: violent, categories: { violence: violent, hate: false } }],
        }),
      );
    });
    gateway = await startGateway({
      env: gatewayEnv(mock, { UPSTREAM_RETRIES: '0', METRICS_ENABLED: 'true' }),
      configYaml,
      startTimeoutMs: 60_000,
    });
    client = openAIClient(gateway);
    anthropic = anthropicClient(gateway);
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('redacts PII in the request before the upstream and in the JSON answer', async () => {
    const completion = await client.chat.completions.create({
      model: 'pii-model',
      messages: [{ role: 'user', content: 'I am ｊｏｈｎ＠example.org (EMP-004211), call +44 20 7946 0958' }],
    });
    expect(userText(received.at(-1))).toContain('I am [REDACTED_EMAIL] ([REDACTED_EMPLOYEE_ID]), call [REDACTED_PHONE]');
    expect(userText(received.at(-1))).not.toContain('example.org');
    expect(completion.choices[0]?.message.content).toBe('Write to [REDACTED_EMAIL] or pay with [REDACTED_CARD], bye.');
    expect((completion as unknown as { provider?: string }).provider).toBe('openai'); // the rebuilt answer keeps the stamp
  });

  it('redacts PII split across stream chunks', async () => {
    const stream = await client.chat.completions.create({ model: 'pii-model', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Write to [REDACTED_EMAIL] or pay with [REDACTED_CARD], bye.');
  });

  it('blocks a secret in the request with 400 guardrail_blocked and x-guardrail-blocked, never echoing it', async () => {
    const before = received.length;
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: { model: 'mock-model', messages: [{ role: 'user', content: `my key is ${secret}` }] },
    });
    const error = expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'guardrail_blocked' });
    expect(reply.headers['x-guardrail-blocked']).toBe('no-secrets');
    expect(error.message).toContain('no-secrets');
    expect(error.message).toContain('openai_key');
    expect(reply.text).not.toContain('Q7Q7');
    expect(received.length).toBe(before);
  });

  it('ends a started stream with an error event when the answer carries a secret, without sending it', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: { model: 'secret-model', stream: true, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(reply.status).toBe(200);
    expect(reply.text).not.toContain('Q7Q7');
    expect(reply.text).toContain('"code":"guardrail_blocked"');
    const stream = await client.chat.completions.create({
      model: 'secret-model',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const failure = await rejectionOf(
      (async () => {
        for await (const _chunk of stream);
      })(),
    );
    expect(failure).toBeInstanceOf(APIError);
  });

  it('ends started /v1/messages and /v1/responses streams with an error event, without the secret', async () => {
    const messages = await rawRequest(`${gateway.url}/v1/messages`, {
      headers: bearer(),
      body: { model: 'secret-model', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(messages.status).toBe(200);
    expect(messages.text).not.toContain('Q7Q7');
    expect(messages.text).toContain('event: error');
    expect(messages.text).toContain('no-secrets');
    const responses = await rawRequest(`${gateway.url}/v1/responses`, {
      headers: bearer(),
      body: { model: 'secret-model', stream: true, input: 'hi' },
    });
    expect(responses.status).toBe(200);
    expect(responses.text).not.toContain('Q7Q7');
    expect(responses.text).toMatch(/"type":"(error|response\.failed)"/);
  });

  it('guards /v1/responses through the chat shape', async () => {
    const before = received.length;
    const response = await client.responses.create({ model: 'pii-model', input: 'reach me at a.b@example.net' });
    expect(received.length).toBe(before + 1);
    expect(userText(received.at(-1))).toContain('[REDACTED_EMAIL]');
    expect(response.output_text).toBe('Write to [REDACTED_EMAIL] or pay with [REDACTED_CARD], bye.');
    const blocked = await rejectionOf(client.responses.create({ model: 'mock-model', input: 'tell me about Project FALCON' }));
    expect(blocked).toBeInstanceOf(APIError);
    expect((blocked as APIError).status).toBe(400);
    expect((blocked as APIError).headers?.get('x-guardrail-blocked')).toBe('falcon');
  });

  it('guards /v1/messages, JSON and stream, with the Anthropic client', async () => {
    const message = await anthropic.messages.create({
      model: 'pii-model',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'mail x@example.com' }],
    });
    expect(userText(received.at(-1))).toContain('mail [REDACTED_EMAIL]');
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Write to [REDACTED_EMAIL] or pay with [REDACTED_CARD], bye.' });
    const stream = anthropic.messages.stream({ model: 'pii-model', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(await stream.finalText()).toBe('Write to [REDACTED_EMAIL] or pay with [REDACTED_CARD], bye.');
    const blocked = await rejectionOf(
      anthropic.messages.create({ model: 'mock-model', max_tokens: 5, messages: [{ role: 'user', content: 'project falcon?' }] }),
    );
    expect((blocked as { status?: number }).status).toBe(400);
  });

  it('blocks input a provider moderation endpoint flags', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: { model: 'mock-model', messages: [{ role: 'user', content: 'an attack plan' }] },
    });
    const error = expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'guardrail_blocked' });
    expect(error.message).toContain('flagged by moderation (violence)');
    expect(reply.headers['x-guardrail-blocked']).toBe('moderated');
    const sent = mock.requests.filter((recorded) => recorded.path.endsWith('/moderations')).at(-1);
    expect(sent?.body).toEqual({ model: 'omni-moderation-latest', input: ['an attack plan'] });
  });

  it('limits input tokens where scoped, and monitor mode only logs', async () => {
    const long = 'lorem ipsum dolor '.repeat(100);
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: { model: 'mock-model', messages: [{ role: 'user', content: long }] },
    });
    expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'guardrail_blocked' });
    expect(reply.headers['x-guardrail-blocked']).toBe('size');
    // /v1/responses is out of the size guardrail's scope.
    await client.responses.create({ model: 'mock-model', input: long });
    const completion = await client.chat.completions.create({
      model: 'mock-model',
      messages: [{ role: 'user', content: 'the watchword is here' }],
    });
    expect(completion.choices[0]?.message.content).toBe('Hello there.');
    expect(userText(received.at(-1))).toContain('the watchword is here');
    const logged = gateway.logs().find((line) => (line['guardrail'] as { guardrail?: string } | undefined)?.guardrail === 'watch');
    expect(logged?.['guardrail']).toMatchObject({ mode: 'monitor', action: 'block', stage: 'input', entity: 'term' });
    const metrics = await rawRequest(`${gateway.url}/metrics`, { headers: bearer() });
    expect(metrics.text).toMatch(/gateway_guardrail_decisions_total\{guardrail="watch",action="block",mode="monitor",stage="input"\} 1/);
    expect(metrics.text).toMatch(/gateway_guardrail_decisions_total\{guardrail="size",action="block",mode="enforce",stage="input"\} 1/);
  });
});

describe('guardrails configuration at start-up', () => {
  it('refuses an unknown type and an unsafe regex, naming the key', async () => {
    const unknown = await runGatewayExpectingFailure({ configYaml: 'guardrails:\n  - { name: x, type: nope }\n' });
    expect(unknown.output).toContain('guardrails.0.type: expected one of pii, secrets, deny_list');
    const regex = await runGatewayExpectingFailure({ configYaml: "guardrails:\n  - { name: d, type: deny_list, patterns: ['(a+)+b'] }\n" });
    expect(regex.output).toContain('guardrails.0.patterns.0: nested quantifiers');
  }, 60_000);
});
