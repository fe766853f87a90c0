import type { ServerResponse } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loggedRequest } from '../support/admin.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, type Call, callJson, parseJson } from '../support/http.ts';
import { type MockRequest, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { eventually } from '../support/wait.ts';

// Issue 20 (remainder): GET|PUT|DELETE /admin/guardrails, stored in PostgreSQL here and shared
// by two replicas; configuration guardrails listed first and read-only; every decision in the
// request log entry and in /metrics; hot reload rebuilds the YAML guardrails.

interface Listed {
  name: string;
  type: string;
  mode: string;
  position: number;
  origin: string;
  managed: boolean;
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}

const configYaml = `
guardrails:
  - name: cfg-pii
    type: pii
    entities: [email]
  - name: cfg-watch
    type: deny_list
    mode: monitor
    terms: [watchword]
`;

/** Chat answers: the `leaky` model answers with an email address, the others with "fine". */
function chatHandler(received: unknown[]) {
  return (request: MockRequest, response: ServerResponse): void => {
    received.push(request.body);
    const body = request.body as { model: string };
    const content = body.model === 'leaky' ? 'write to ops@example.com' : 'fine';
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
      }),
    );
  };
}

const chatOf = (model: string, content: string, requestId: string): Call => ({
  body: { model, messages: [{ role: 'user', content }] },
  headers: { 'x-request-id': requestId },
});

describe('admin API of guardrails, two replicas on one PostgreSQL database', () => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let first: GatewayProcess;
  let second: GatewayProcess;
  const received: unknown[] = [];

  beforeAll(async () => {
    mock = await startMockUpstream({ models: ['mock-model', 'leaky'] });
    mock.route('POST', '/chat/completions', chatHandler(received));
    database = await createGatewayDatabase('postgresql');
    const env = gatewayEnv(mock, { ...database.env, RELOAD_INTERVAL_SECONDS: '1', METRICS_ENABLED: 'true', UPSTREAM_RETRIES: '0' });
    first = await startGateway({ env, configYaml, startTimeoutMs: 60_000 });
    second = await startGateway({ env, configYaml, startTimeoutMs: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    await database?.dispose();
    await mock?.close();
  });

  const admin = (gateway: GatewayProcess, options: Call = {}) => call(gateway, '/admin/guardrails', options);
  const list = async (gateway: GatewayProcess): Promise<Listed[]> => {
    const reply = await admin(gateway);
    expect(reply.status, reply.text).toBe(200);
    return JSON.parse(reply.text) as Listed[];
  };
  const chat = (gateway: GatewayProcess, model: string, content: string, requestId: string) =>
    call(gateway, '/v1/chat/completions', chatOf(model, content, requestId));

  it('lists configuration guardrails first, in the YAML shape with defaults, read-only', async () => {
    const listed = await list(first);
    expect(listed.map((entry) => [entry.name, entry.position, entry.origin, entry.managed])).toEqual([
      ['cfg-pii', 0, 'config', false],
      ['cfg-watch', 1, 'config', false],
    ]);
    expect(listed[0]).toMatchObject({
      type: 'pii',
      mode: 'enforce',
      action: 'redact',
      on: 'both',
      entities: ['email'],
      replacement: '[REDACTED_<ENTITY>]',
      applies_to: { user_paths: [], models: [], endpoints: [] },
    });
    expect(await callJson(first, '/admin/guardrails/cfg-watch', 200)).toMatchObject({ name: 'cfg-watch', terms: ['watchword'] });
    expectEnvelope(await call(first, '/admin/guardrails/nope'), { status: 404, type: 'not_found_error', code: 'guardrail_not_found' });
    const put = await admin(first, { method: 'PUT', body: { name: 'cfg-pii', type: 'secrets' } });
    expectEnvelope(put, { status: 409, type: 'invalid_request_error', code: 'guardrail_read_only', param: 'name' });
    const removal = await call(first, '/admin/guardrails?name=cfg-watch', { method: 'DELETE' });
    expectEnvelope(removal, { status: 409, type: 'invalid_request_error', code: 'guardrail_read_only' });
  });

  it('refuses invalid bodies naming the field, unsafe regexes and custom modules; viewer keys only read', async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: 'x', type: 'nope' }, 'type'],
      [{ name: 'x', type: 'pii', entities: ['email', 'dna'] }, 'entities.1'],
      [{ name: 'bad name!', type: 'secrets' }, 'name'],
      [{ name: 'x', type: 'deny_list', patterns: ['(a+)+b'] }, 'patterns.0'],
      [{ name: 'x', type: 'deny_list' }, 'terms'],
      [{ name: 'x', type: 'custom', module: '/tmp/evil.mjs' }, 'type'],
      [{ name: 'x', type: 'moderation', provider: 'nowhere' }, 'provider'],
      [{ name: 'x', type: 'pii', colour: 'red' }, ''],
    ];
    for (const [body, param] of cases) {
      const reply = await admin(first, { method: 'PUT', body });
      const error = expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'invalid_parameter' });
      if (param !== '') expect(error.param, reply.text).toBe(param);
    }
    const regex = parseJson((await admin(first, { method: 'PUT', body: cases[3]?.[0] })).text);
    expect(JSON.stringify(regex)).toContain('nested quantifiers');
    // Patterns run on RE2 (linear time): what it cannot run is refused, naming the field and the pattern.
    for (const pattern of ['(a)\\1', '(?<=a)b', 'x*']) {
      const refused = await admin(first, { method: 'PUT', body: { name: 'x', type: 'deny_list', patterns: ['ok', pattern] } });
      const error = expectEnvelope(refused, { status: 400, type: 'invalid_request_error', code: 'invalid_parameter' });
      expect(error.param).toBe('patterns.1');
      expect(error.message).toContain(JSON.stringify(pattern));
    }
    expectEnvelope(await admin(first, { method: 'DELETE', body: {} }), {
      status: 400,
      type: 'invalid_request_error',
      code: 'missing_field',
      param: 'name',
    });
    const viewer = await callJson(first, '/admin/api-keys', 201, { body: { name: 'watcher', role: 'viewer' } });
    const token = String(viewer['key']);
    expect((await admin(first, { token })).status).toBe(200);
    expectEnvelope(await admin(first, { token, method: 'PUT', body: { name: 'v', type: 'secrets' } }), {
      status: 403,
      type: 'permission_error',
      code: 'admin_required',
    });
    expect((await list(first)).map((entry) => entry.name)).toEqual(['cfg-pii', 'cfg-watch']);
  });

  it('PUT takes effect at once here and within the reload interval on the other replica, audited; DELETE undoes it', async () => {
    expect((await chat(second, 'mock-model', 'about project falcon', 'before-put')).status).toBe(200);
    const body = { name: 'falcon', type: 'deny_list', terms: ['project falcon'], applies_to: { endpoints: '/v1/chat/completions' } };
    const put = await admin(first, { method: 'PUT', body: { ...body, origin: 'config', position: 9 } });
    expect(put.status, put.text).toBe(200);
    const created = JSON.parse(put.text) as Listed;
    expect(created).toMatchObject({ name: 'falcon', action: 'block', on: 'input', origin: 'manual', managed: true, position: 2 });
    const blocked = await chat(first, 'mock-model', 'about Project Falcon', 'blocked-first');
    expectEnvelope(blocked, { status: 400, type: 'invalid_request_error', code: 'guardrail_blocked' });
    expect(blocked.headers['x-guardrail-blocked']).toBe('falcon');
    await eventually(
      async () => ((await chat(second, 'mock-model', 'about project falcon', 'poll')).status === 400 ? true : undefined),
      'the stored guardrail on the second replica',
      8_000,
    );
    const audit = await callJson(first, '/admin/audit?limit=1', 200);
    expect((audit['entries'] as unknown[])[0]).toMatchObject({
      action: 'upsert',
      resource: 'guardrails/falcon',
      after: { name: 'falcon' },
    });

    // A second PUT replaces it (monitor mode now) and keeps its creation time.
    const replaced = await admin(second, { method: 'PUT', body: { ...body, mode: 'monitor' } });
    expect(JSON.parse(replaced.text)).toMatchObject({ mode: 'monitor', created_at: created.created_at });
    expect((await chat(second, 'mock-model', 'about project falcon', 'monitored')).status).toBe(200);

    const removed = await call(first, '/admin/guardrails?name=falcon', { method: 'DELETE' });
    expect((JSON.parse(removed.text) as Listed[]).map((entry) => entry.name)).toEqual(['cfg-pii', 'cfg-watch']);
    expect((await chat(first, 'mock-model', 'about project falcon', 'after-delete')).status).toBe(200);
    expectEnvelope(await admin(second, { method: 'DELETE', body: { name: 'falcon' } }), {
      status: 404,
      type: 'not_found_error',
      code: 'guardrail_not_found',
    });
  });

  it('shows block, redact and monitor decisions in the request log and in /metrics', async () => {
    const put = await admin(first, { method: 'PUT', body: { name: 'no-keys', type: 'secrets' } });
    expect(put.status, put.text).toBe(200);
    expectEnvelope(await chat(first, 'mock-model', `key sk-proj-${'Z9'.repeat(20)}`, 'log-block'), {
      status: 400,
      type: 'invalid_request_error',
      code: 'guardrail_blocked',
    });
    expect((await chat(first, 'leaky', 'mail me at me@example.org', 'log-redact')).status).toBe(200);
    expect((await chat(first, 'mock-model', 'the watchword', 'log-monitor')).status).toBe(200);
    expect((await chat(first, 'mock-model', 'nothing here', 'log-none')).status).toBe(200);

    const decisions = async (id: string) => (await loggedRequest(first, id)).guardrails;
    expect(await decisions('log-block')).toEqual([{ name: 'no-keys', type: 'secrets', action: 'block', mode: 'enforce', stage: 'input' }]);
    expect(await decisions('log-redact')).toEqual([
      { name: 'cfg-pii', type: 'pii', action: 'redact', mode: 'enforce', stage: 'input' },
      { name: 'cfg-pii', type: 'pii', action: 'redact', mode: 'enforce', stage: 'output' },
    ]);
    expect(await decisions('log-monitor')).toEqual([
      { name: 'cfg-watch', type: 'deny_list', action: 'block', mode: 'monitor', stage: 'input' },
    ]);
    expect(await decisions('log-none')).toBeNull();
    const listing = await callJson(first, '/admin/requests?q=log-re', 200);
    expect((listing['requests'] as Array<{ guardrails: unknown }>)[0]?.guardrails).toHaveLength(2);

    const metrics = (await call(first, '/metrics')).text;
    expect(metrics).toMatch(/gateway_guardrail_decisions_total\{guardrail="no-keys",action="block",mode="enforce",stage="input"\} 1\n/);
    expect(metrics).toMatch(/gateway_guardrail_decisions_total\{guardrail="cfg-pii",action="redact",mode="enforce",stage="output"\} 1\n/);
    expect(metrics).toMatch(/gateway_guardrail_decisions_total\{guardrail="cfg-watch",action="block",mode="monitor",stage="input"\} 1\n/);
  });
});

describe('hot reload rebuilds the YAML guardrails', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream({ models: ['mock-model'] });
    mock.route('POST', '/chat/completions', chatHandler([]));
    gateway = await startGateway({
      env: gatewayEnv(mock, {}),
      configYaml: 'guardrails:\n  - { name: alpha, type: deny_list, terms: [alpha] }\n',
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  const status = async (content: string): Promise<number> =>
    (await call(gateway, '/v1/chat/completions', chatOf('mock-model', content, `r-${content}`))).status;

  it('swaps the configuration guardrails on POST /admin/reload and refuses a bad entry, keeping the old ones', async () => {
    expect(await status('alpha')).toBe(400);
    expect(await status('beta')).toBe(200);
    const stored = await call(gateway, '/admin/guardrails', {
      method: 'PUT',
      body: { name: 'stored', type: 'deny_list', terms: ['gamma'] },
    });
    expect(stored.status, stored.text).toBe(200);
    writeFileSync(join(gateway.cwd, 'config.yaml'), 'guardrails:\n  - { name: beta, type: deny_list, terms: [beta] }\n');
    const reply = await callJson(gateway, '/admin/reload', 200, { method: 'POST', body: {} });
    expect(reply['applied']).toContain('guardrails');
    expect(await status('alpha')).toBe(200);
    expect(await status('beta')).toBe(400);
    expect(await status('gamma')).toBe(400);
    expect((await callJson(gateway, '/admin/guardrails/beta', 200))['origin']).toBe('config');

    writeFileSync(join(gateway.cwd, 'config.yaml'), 'guardrails:\n  - { name: bad, type: custom, module: ./missing.mjs }\n');
    const refused = await call(gateway, '/admin/reload', { method: 'POST', body: {} });
    expectEnvelope(refused, { status: 400, type: 'invalid_request_error', code: 'invalid_config' });
    expect(await status('beta')).toBe(400);
  });
});
