import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { chatAt, expectRateLimited, type ListedRule, listRules, putRule, rateLimitHeaders } from '../support/rate-limits.ts';
import { backendNames, createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';

// CONTRACT section 6 and SEED-SPEC "Limits" rule 12: manual rules are stored durably and survive
// a restart on the same data; counters are in memory and start again from zero; configuration
// rules are not stored (they come from the configuration of each start).

const hour = { period: 'hour' };

/** The stored identity and caps of a rule (live counters and windows left out). */
const identity = (rule: ListedRule) => ({
  scope: rule.scope,
  subject: rule.subject,
  period: rule.period,
  period_seconds: rule.period_seconds,
  max_requests: rule.max_requests,
  max_tokens: rule.max_tokens,
  origin: rule.origin,
  created_at: rule.created_at,
  updated_at: rule.updated_at,
});

describe.each(backendNames)('rate-limit rules across a restart on %s', (backendName) => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let cwd: string;
  let gateway: GatewayProcess | undefined;

  const start = async (extra: Record<string, string> = {}): Promise<GatewayProcess> => {
    gateway = await startGateway({ cwd, env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model,gpt-4o', ...database.env, ...extra }) });
    return gateway;
  };

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createGatewayDatabase(backendName);
    cwd = mkdtempSync(join(tmpdir(), 'gateway-rl-persist-'));
  });

  afterAll(async () => {
    await gateway?.stop();
    await database?.dispose();
    await mock?.close();
  });

  it('keeps manual rules (with their timestamps) and drops counters and configuration rules', async () => {
    const first = await start({ SET_RATE_LIMIT_GONE: 'rph=1' });
    await putRule(first, { user_path: '/persist', limit_key: hour, max_requests: 1 });
    await putRule(first, { user_path: '/persist/concurrent', limit_key: { period: 'concurrent' }, max_requests: 3 });
    await putRule(first, {
      scope: 'model',
      subject: 'OpenAI/GPT-4o',
      limit_key: { period_seconds: 7200 },
      max_requests: 1,
      max_tokens: 900,
    });
    await putRule(first, { user_path: '/deleted', limit_key: hour, max_requests: 1 });
    await putRule(first, { user_path: '/edited', limit_key: hour, max_requests: 1 });
    await putRule(first, { user_path: '/edited', limit_key: hour, max_requests: 7 });
    const deleted = await call(first, '/admin/rate-limits', { method: 'DELETE', body: { user_path: '/deleted', limit_key: hour } });
    expect(deleted.status, deleted.text).toBe(200);
    expect((await chatAt(first, '/persist')).status).toBe(200);
    expect((await chatAt(first, '/persist')).status).toBe(429);
    expect((await chatAt(first, '/edited', 'openai/gpt-4o')).status).toBe(200);
    expect((await chatAt(first, '/gone')).status).toBe(200);
    const before = (await listRules(first)).rate_limits;
    expect(before.find((rule) => rule.subject === '/persist' && rule.period === 'hour')?.requests_used).toBe(1);
    expect(await first.stop()).toBe(0);

    const second = await start();
    const after = (await listRules(second)).rate_limits;
    const manual = before.filter((rule) => rule.origin === 'manual');
    expect(manual).toHaveLength(4);
    expect(after.map(identity)).toEqual(manual.map(identity));
    expect(after.find((rule) => rule.scope === 'model')).toMatchObject({ subject: 'openai/gpt-4o', period: '7200s', max_tokens: 900 });
    expect(after.find((rule) => rule.subject === '/edited')).toMatchObject({ max_requests: 7 });
    for (const rule of after) {
      expect(rule, `${rule.subject} ${rule.period}`).toMatchObject({ requests_used: 0, tokens_used: 0, in_flight: 0 });
    }

    // Counters restarted, rules still enforced.
    const again = await chatAt(second, '/persist');
    expect(again.status, again.text).toBe(200);
    expect(again.headers['x-ratelimit-remaining-requests']).toBe('0');
    expectRateLimited(await chatAt(second, '/persist'), 'rate limit exceeded for /persist: hour request limit of 1 reached');
    expect((await chatAt(second, '/x', 'openai/gpt-4o')).status).toBe(200);
    expectRateLimited(
      await chatAt(second, '/x', 'openai/gpt-4o'),
      'rate limit exceeded for model openai/gpt-4o: 7200s request limit of 1 reached',
    );
    // The configuration rule of the first start and the deleted rule are gone.
    for (const path of ['/gone', '/gone', '/deleted', '/deleted']) expect(rateLimitHeaders(await chatAt(second, path))).toEqual({});
  });
});
