import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, type Call } from '../support/http.ts';
import type { MockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { chat, chatCount, closeAll, instancesEnv, servedBy, startMocks } from '../support/virtual-models.ts';
import { eventually } from '../support/wait.ts';

// Issue 15: GET|PUT|DELETE /admin/failover-rules (master key). Configuration rules are listed
// and read-only (409 rule_read_only); admin rules are stored in PostgreSQL here, served at once
// by the replica that took them and within the reload interval by another replica on the
// same database.

interface ListedRule {
  model: string;
  fallbacks: string[];
  on: string[];
  origin: string;
  created_at: string;
  updated_at: string;
}

const configYaml = `
failover:
  rules:
    - { model: openai/from-config, fallbacks: [openai-b/from-config], on: [5xx] }
`;

describe('admin API of failover rules, two replicas on one PostgreSQL database', () => {
  let mocks: MockUpstream[];
  let a: MockUpstream;
  let b: MockUpstream;
  let database: GatewayDatabase;
  let first: GatewayProcess;
  let second: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(2);
    [a, b] = mocks as [MockUpstream, MockUpstream];
    database = await createGatewayDatabase('postgresql');
    const env = instancesEnv(mocks, ['mock-model', 'from-config', 'fr-admin'], {
      ...database.env,
      UPSTREAM_RETRIES: '0',
      CIRCUIT_BREAKER_FAILURES: '1000',
      RELOAD_INTERVAL_SECONDS: '1',
    });
    first = await startGateway({ env, configYaml, startTimeoutMs: 60_000 });
    second = await startGateway({ env, configYaml, startTimeoutMs: 60_000 });
  }, 120_000);

  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    await database?.dispose();
    await closeAll(mocks ?? []);
  });

  const admin = (gateway: GatewayProcess, options: Call = {}) => call(gateway, '/admin/failover-rules', options);

  async function list(gateway: GatewayProcess): Promise<ListedRule[]> {
    const reply = await admin(gateway);
    expect(reply.status, reply.text).toBe(200);
    const body: unknown = JSON.parse(reply.text);
    expect(Array.isArray(body)).toBe(true);
    return body as ListedRule[];
  }

  it('lists the configuration rule, read-only', async () => {
    const [rule] = await list(first);
    expect(rule).toMatchObject({ model: 'openai/from-config', fallbacks: ['openai-b/from-config'], on: ['5xx'], origin: 'config' });
    expect(Object.keys(rule ?? {}).sort()).toEqual(['created_at', 'fallbacks', 'model', 'on', 'origin', 'updated_at']);
    const body = { model: 'openai/from-config', fallbacks: ['openai-b/mock-model'] };
    expectEnvelope(await admin(first, { method: 'PUT', body }), { status: 409, type: 'invalid_request_error', code: 'rule_read_only' });
    const removal = await admin(first, { method: 'DELETE', body: { model: 'openai/from-config' } });
    expectEnvelope(removal, { status: 409, type: 'invalid_request_error', code: 'rule_read_only' });
    a.setBehavior('from-config', { kind: 'error', status: 500 });
    expect(await servedBy(first, 'openai/from-config')).toBe('openai-b');
  });

  it('needs the master key and refuses invalid rules naming the field', async () => {
    expectEnvelope(await admin(first, { token: null }), { status: 401, type: 'authentication_error' });
    const bad = await admin(first, { method: 'PUT', body: { model: 'openai/fr-admin', fallbacks: ['openai-b/fr-admin'], on: ['4xx'] } });
    expectEnvelope(bad, { status: 400, type: 'invalid_request_error', code: 'invalid_parameter', param: 'on.0' });
    const noFallbacks = await admin(first, { method: 'PUT', body: { model: 'openai/fr-admin' } });
    expectEnvelope(noFallbacks, { status: 400, type: 'invalid_request_error', code: 'invalid_parameter', param: 'fallbacks' });
    expectEnvelope(await admin(first, { method: 'DELETE', body: {} }), {
      status: 400,
      type: 'invalid_request_error',
      code: 'missing_field',
      param: 'model',
    });
  });

  it('PUT stores a rule that both replicas apply; a second PUT replaces it; DELETE removes it', async () => {
    a.setBehavior('fr-admin', { kind: 'error', status: 500 });
    expectEnvelope(await chat(second, 'openai/fr-admin'), { status: 500, type: 'provider_error', provider: 'openai' }); // no rule yet
    expect(chatCount(b, 'fr-admin')).toBe(0);

    const put = await admin(first, { method: 'PUT', body: { model: 'openai/fr-admin', fallbacks: ['openai-b/fr-admin'], origin: 'x' } });
    expect(put.status, put.text).toBe(200);
    const created = JSON.parse(put.text) as ListedRule;
    expect(created).toMatchObject({ model: 'openai/fr-admin', on: ['5xx', '429', 'timeout', 'connection', 'saturated'], origin: 'manual' });
    expect(await servedBy(first, 'openai/fr-admin')).toBe('openai-b');
    // The other replica reads it from the database within its reload interval.
    await eventually(
      async () => ((await chat(second, 'openai/fr-admin')).status === 200 ? true : undefined),
      'the rule on the second replica',
      8_000,
    );
    expect((await list(second)).map((rule) => `${rule.model} ${rule.origin}`)).toEqual([
      'openai/fr-admin manual',
      'openai/from-config config',
    ]);

    const replaced = await admin(second, {
      method: 'PUT',
      body: { model: 'openai/fr-admin', fallbacks: ['openai-b/fr-admin'], on: [429] },
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(JSON.parse(replaced.text)).toMatchObject({ on: ['429'], created_at: created.created_at });
    expectEnvelope(await chat(second, 'openai/fr-admin'), { status: 500, type: 'provider_error', provider: 'openai' });

    const removed = await call(first, '/admin/failover-rules?model=openai%2Ffr-admin', { method: 'DELETE' });
    expect(removed.status, removed.text).toBe(200);
    expect((JSON.parse(removed.text) as ListedRule[]).map((rule) => rule.model)).toEqual(['openai/from-config']);
    const again = await admin(second, { method: 'DELETE', body: { model: 'openai/fr-admin' } });
    expectEnvelope(again, { status: 404, type: 'not_found_error', code: 'failover_rule_not_found' });
    const callsBefore = chatCount(b, 'fr-admin');
    expectEnvelope(await chat(first, 'openai/fr-admin'), { status: 500, type: 'provider_error', provider: 'openai' });
    expect(chatCount(b, 'fr-admin')).toBe(callsBefore);
  });
});
