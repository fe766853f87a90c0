import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, type Call, parseJson } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { chatAt, expectRateLimited, findRule, listRules, putRule, rateLimitHeaders } from '../support/rate-limits.ts';
import { chatRequests } from '../support/upstream.ts';

// The refusals of the rate-limit administration (CONTRACT sections 3, 4 and 6): invalid rules
// (400 naming the field), read-only configuration rules (409 rule_read_only), credentials (401
// and 403 for a managed key), and the feature switched off (503 feature_unavailable).

const validRule = { user_path: '/err/valid', limit_key: { period: 'minute' }, max_requests: 1 };

/** The five operations, each with a body it would accept. */
const operations: Array<[Call['method'], string, Record<string, unknown> | undefined]> = [
  ['GET', '/admin/rate-limits', undefined],
  ['PUT', '/admin/rate-limits', validRule],
  ['DELETE', '/admin/rate-limits', { user_path: '/cfg', limit_key: { period: 'minute' } }],
  ['POST', '/admin/rate-limits/reset-one', { user_path: '/cfg', period: 'minute' }],
  ['POST', '/admin/rate-limits/reset', { confirmation: 'reset' }],
];

const gatewayYaml = `
rate_limits:
  user_paths:
    - path: /cfg
      limits: [{ period: minute, max_requests: 5 }]
`;

describe('rate-limit administration refusals', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let disabled: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    [gateway, disabled] = await Promise.all([
      startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model' }), configYaml: gatewayYaml }),
      startGateway({
        env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model', RATE_LIMITS_ENABLED: 'false', SET_RATE_LIMIT_OFF: 'rpm=1' }),
        configYaml: gatewayYaml,
      }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), disabled?.stop()]);
    await mock?.close();
  });

  const invalidBodies: Array<[string, Record<string, unknown>, string[]]> = [
    ['missing limit_key', { user_path: '/err/x', max_requests: 1 }, ['limit_key']],
    [
      'both period and period_seconds',
      { user_path: '/err/x', limit_key: { period: 'minute', period_seconds: 60 }, max_requests: 1 },
      ['limit_key', 'period', 'period_seconds'],
    ],
    [
      'neither period nor period_seconds',
      { user_path: '/err/x', limit_key: {}, max_requests: 1 },
      ['limit_key', 'period', 'period_seconds'],
    ],
    ['no caps', { user_path: '/err/x', limit_key: { period: 'minute' } }, ['max_requests', 'max_tokens']],
    [
      'max_tokens on a concurrent rule',
      { user_path: '/err/x', limit_key: { period: 'concurrent' }, max_requests: 2, max_tokens: 10 },
      ['max_tokens'],
    ],
    [
      'a concurrent rule without max_requests',
      { user_path: '/err/x', limit_key: { period: 'concurrent' }, max_tokens: 10 },
      ['max_requests', 'max_tokens'],
    ],
    ['an unknown period', { user_path: '/err/x', limit_key: { period: 'fortnight' }, max_requests: 1 }, ['period']],
    ['a negative period_seconds', { user_path: '/err/x', limit_key: { period_seconds: -5 }, max_requests: 1 }, ['period_seconds']],
    ['max_requests 0', { user_path: '/err/x', limit_key: { period: 'minute' }, max_requests: 0 }, ['max_requests']],
    ['max_tokens not an integer', { user_path: '/err/x', limit_key: { period: 'minute' }, max_tokens: 'many' }, ['max_tokens']],
    [
      'a provider rule with only user_path',
      { scope: 'provider', user_path: '/err/x', limit_key: { period: 'minute' }, max_requests: 1 },
      ['user_path', 'subject'],
    ],
    [
      'a provider rule with subject and user_path',
      { scope: 'provider', subject: 'openai', user_path: '/err/x', limit_key: { period: 'minute' }, max_requests: 1 },
      ['user_path', 'subject'],
    ],
    ['a model rule without subject', { scope: 'model', limit_key: { period: 'minute' }, max_requests: 1 }, ['subject']],
    ['an unknown scope', { scope: 'team', subject: 'x', limit_key: { period: 'minute' }, max_requests: 1 }, ['scope']],
    ['a path with ..', { user_path: '/a/../b', limit_key: { period: 'minute' }, max_requests: 1 }, ['user_path', 'subject']],
  ];

  it.each(invalidBodies)('PUT with %s -> 400 naming the field', async (_name, body, fields) => {
    const reply = await call(gateway, '/admin/rate-limits', { method: 'PUT', body });
    const error = expectEnvelope(reply, { status: 400, type: 'invalid_request_error' });
    expect(fields, `param ${String(error.param)}`).toContain(error.param);
    const named = fields.some((field) => error.message.includes(field) || error.message.includes(field.replace('_', ' ')));
    expect(named, error.message).toBe(true);
  });

  it('rejects malformed JSON and leaves the rules as they were after every refusal', async () => {
    const reply = await call(gateway, '/admin/rate-limits', { method: 'PUT', body: '{"user_path": "/err/x",' });
    expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'invalid_json' });
    const deleteWithoutKey = await call(gateway, '/admin/rate-limits', { method: 'DELETE', body: { user_path: '/cfg' } });
    expect(expectEnvelope(deleteWithoutKey, { status: 400, type: 'invalid_request_error' }).param).toBe('limit_key');
    const subjects = (await listRules(gateway)).rate_limits.map((rule) => `${rule.scope} ${rule.subject} ${rule.period}`);
    expect(subjects).toEqual(['user_path /cfg minute']);
  });

  it('configuration rules are read-only: PUT and DELETE of their key -> 409 rule_read_only', async () => {
    for (const [method, body] of [
      ['PUT', { user_path: '/cfg', limit_key: { period: 'minute' }, max_requests: 500 }],
      ['PUT', { scope: 'user_path', subject: '/CFG/', limit_key: { period_seconds: 60 }, max_tokens: 10 }],
      ['DELETE', { user_path: '/cfg', limit_key: { period: 'minute' } }],
      ['DELETE', { scope: 'user_path', subject: '/Cfg', limit_key: { period_seconds: 60 } }],
    ] as const) {
      const reply = await call(gateway, '/admin/rate-limits', { method, body });
      expectEnvelope(reply, { status: 409, type: 'invalid_request_error', code: 'rule_read_only' });
    }
    expect(await findRule(gateway, 'user_path', '/cfg', 'minute')).toMatchObject({ origin: 'config', max_requests: 5, max_tokens: null });
    expect((await chatAt(gateway, '/cfg')).headers['x-ratelimit-limit-requests']).toBe('5');
    // Another period on the same path is a different rule, and a manual one.
    const listing = await putRule(gateway, { user_path: '/cfg', limit_key: { period: 'hour' }, max_requests: 50 });
    expect(listing.rate_limits.map((rule) => `${rule.subject} ${rule.period} ${rule.origin}`)).toEqual([
      '/cfg minute config',
      '/cfg hour manual',
    ]);
    await call(gateway, '/admin/rate-limits', { method: 'DELETE', body: { user_path: '/cfg', limit_key: { period: 'hour' } } });
  });

  it('every operation needs the master key: none or a wrong one -> 401, a managed key -> 403', async () => {
    const created = await call(gateway, '/admin/api-keys', { body: { name: 'rate-limit-tests', user_path: '/keys/k1' } });
    expect(created.status, created.text).toBe(201);
    const managedKey = String(parseJson(created.text)['key']);
    for (const [method, path, body] of operations) {
      for (const token of [null, 'sk-gw-not-a-real-key']) {
        expectEnvelope(await call(gateway, path, { method, body, token }), { status: 401, type: 'authentication_error' });
      }
      expectEnvelope(await call(gateway, path, { method, body, token: managedKey }), { status: 403, type: 'permission_error' });
    }
    // Nothing changed: no rule created, the configuration rule still there.
    expect((await listRules(gateway)).rate_limits.map((rule) => rule.subject)).toEqual(['/cfg']);

    // A per-key limit is a rule on the key's path; the key's path wins over X-User-Path.
    await putRule(gateway, { user_path: '/keys/k1', limit_key: { period: 'hour' }, max_requests: 1 });
    const asKey = (userPath: string) =>
      call(gateway, '/v1/chat/completions', {
        token: managedKey,
        headers: { 'x-user-path': userPath },
        body: { model: 'openai/mock-model', messages: [{ role: 'user', content: 'hi' }] },
      });
    const first = await asKey('/elsewhere');
    expect(first.status, first.text).toBe(200);
    expect(first.headers['x-ratelimit-limit-requests']).toBe('1');
    expectRateLimited(await asKey('/other'), 'rate limit exceeded for /keys/k1: hour request limit of 1 reached');
  });

  it('RATE_LIMITS_ENABLED=false: all five operations -> 503 feature_unavailable, declared rules not enforced', async () => {
    for (const [method, path, body] of operations) {
      const reply = await call(disabled, path, { method, body });
      expectEnvelope(reply, { status: 503, type: 'invalid_request_error', code: 'feature_unavailable' });
      expectEnvelope(await call(disabled, path, { method, body, token: null }), { status: 401, type: 'authentication_error' });
    }
    const before = chatRequests(mock).length;
    for (const path of ['/off', '/off', '/off', '/cfg']) {
      const reply = await chatAt(disabled, path);
      expect(reply.status).toBe(200);
      expect(rateLimitHeaders(reply)).toEqual({});
    }
    expect(chatRequests(mock).length - before).toBe(4);
  });

  it('RATE_LIMITS_ENABLED=false: the operations answer 503 whatever the body', async () => {
    const observed: Record<string, string | null> = {};
    const expected: Record<string, string | null> = {};
    for (const [method, path] of operations.filter(([method]) => method !== 'GET')) {
      for (const body of [{}, undefined]) {
        const reply = await call(disabled, path, { method, body });
        const name = `${String(method)} ${path} with body ${JSON.stringify(body) ?? 'none'}`;
        observed[name] = `${reply.status} ${String((JSON.parse(reply.text) as { error?: { code?: string } }).error?.code)}`;
        expected[name] = '503 feature_unavailable';
      }
    }
    expect(observed).toEqual(expected);
  });
});
