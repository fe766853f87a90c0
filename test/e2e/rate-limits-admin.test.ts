import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, parseJson } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { chatAt, expectListing, expectRateLimited, findRule, type ListedRule, listRules, putRule } from '../support/rate-limits.ts';
import { chatRequests } from '../support/upstream.ts';

// The rate-limit administration of SEED-SPEC ("Rate-limit administration", "States and
// transitions") with the bodies of CONTRACT section 6: create, list with live usage, edit caps
// (counters kept), move (counters restart), delete, reset one, reset all. Every rule is checked
// over HTTP too, so a listing that lies fails.

const hour = { period: 'hour' };

async function deleteRule(gateway: GatewayProcess, body: Record<string, unknown>, status = 200) {
  return call(gateway, '/admin/rate-limits', { method: 'DELETE', body }).then((reply) => {
    expect(reply.status, reply.text).toBe(status);
    return reply;
  });
}

function ruleOf(rules: ListedRule[], scope: string, subject: string, period: string): ListedRule {
  const rule = rules.find((one) => one.scope === scope && one.subject === subject && one.period === period);
  expect(rule, `${scope} ${subject} ${period} in ${JSON.stringify(rules)}`).toBeDefined();
  return rule as ListedRule;
}

describe('rate-limit administration', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({
      env: gatewayEnv(mock, {
        OPENAI_MODELS: 'mock-model,gpt-4o,error-500',
        OPENAI_X_API_KEY: 'sk-upstream',
        OPENAI_X_BASE_URL: mock.url,
        OPENAI_X_MODELS: 'mock-model',
      }),
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  beforeEach(() => {
    mock.reset();
  });

  it('starts with no rules and no x-ratelimit headers', async () => {
    const listing = await listRules(gateway);
    expect(listing.rate_limits).toEqual([]);
    expect(Math.abs(Date.parse(listing.server_time) - Date.now())).toBeLessThan(5_000);
    const reply = await chatAt(gateway, '/adm');
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.headers).filter((name) => name.startsWith('x-ratelimit-'))).toEqual([]);
  });

  it('PUT with the user_path shorthand: 200 with the list body, rule fields of CONTRACT 6, enforced at once', async () => {
    const before = Date.now();
    const listing = await putRule(gateway, { user_path: 'adm/short/', limit_key: { period: 'minute' }, max_requests: 1 });
    const rule = ruleOf(listing.rate_limits, 'user_path', '/adm/short', 'minute');
    expect(rule).toMatchObject({
      scope: 'user_path',
      subject: '/adm/short',
      user_path: '/adm/short',
      period: 'minute',
      period_seconds: 60,
      max_requests: 1,
      max_tokens: null,
      origin: 'manual',
      requests_used: 0,
      requests_remaining: 1,
      tokens_used: 0,
      tokens_remaining: null,
      in_flight: 0,
    });
    expect(rule.created_at).toBe(rule.updated_at);
    expect(Date.parse(rule.created_at)).toBeGreaterThanOrEqual(before - 1000);
    const start = Date.parse(String(rule.window_start));
    const end = Date.parse(String(rule.window_end));
    const serverTime = Date.parse(listing.server_time);
    expect(start % 60_000).toBe(0);
    expect(end - start).toBe(60_000);
    expect(start).toBeLessThanOrEqual(serverTime);
    expect(serverTime).toBeLessThan(end);

    expect((await chatAt(gateway, '/adm/short/app')).status).toBe(200);
    expectRateLimited(await chatAt(gateway, '/adm/short'), 'rate limit exceeded for /adm/short: minute request limit of 1 reached');
    expect(await findRule(gateway, 'user_path', '/adm/short', 'minute')).toMatchObject({ requests_used: 1, requests_remaining: 0 });
    expect(chatRequests(mock)).toHaveLength(1);
  });

  it('PUT with scope and subject: custom windows and concurrent rules', async () => {
    await putRule(gateway, { scope: 'user_path', subject: '/adm/custom', limit_key: { period_seconds: 300 }, max_tokens: 40 });
    const listing = await putRule(gateway, {
      scope: 'user_path',
      subject: '/adm/custom',
      limit_key: { period: 'concurrent' },
      max_requests: 4,
    });
    expect(ruleOf(listing.rate_limits, 'user_path', '/adm/custom', '300s')).toMatchObject({
      period_seconds: 300,
      max_requests: null,
      max_tokens: 40,
      requests_remaining: null,
      tokens_remaining: 40,
      origin: 'manual',
    });
    const concurrent = ruleOf(listing.rate_limits, 'user_path', '/adm/custom', 'concurrent');
    expect(concurrent).toMatchObject({ period_seconds: 0, max_requests: 4, max_tokens: null, requests_remaining: 4, in_flight: 0 });
    expect(concurrent.window_start).toBeNull();
    expect(concurrent.window_end).toBeNull();
    const reply = await chatAt(gateway, '/adm/custom');
    expect(reply.status).toBe(200);
    expect(reply.headers['x-ratelimit-limit-tokens']).toBe('40');
  });

  it('editing only the caps keeps the counters; moving a rule (PUT new key, DELETE old) restarts them', async () => {
    await putRule(gateway, { user_path: '/adm/edit', limit_key: hour, max_requests: 2 });
    const created = await findRule(gateway, 'user_path', '/adm/edit', 'hour');
    for (let index = 0; index < 2; index += 1) expect((await chatAt(gateway, '/adm/edit')).status).toBe(200);
    expect((await chatAt(gateway, '/adm/edit')).status).toBe(429);

    const edited = ruleOf(
      (await putRule(gateway, { user_path: '/adm/edit', limit_key: hour, max_requests: 10, max_tokens: 1000 })).rate_limits,
      'user_path',
      '/adm/edit',
      'hour',
    );
    expect(edited).toMatchObject({
      max_requests: 10,
      max_tokens: 1000,
      requests_used: 2,
      requests_remaining: 8,
      created_at: created?.created_at,
    });
    expect(Date.parse(edited.updated_at)).toBeGreaterThanOrEqual(Date.parse(String(created?.updated_at)));
    const after = await chatAt(gateway, '/adm/edit');
    expect(after.status).toBe(200);
    expect(after.headers['x-ratelimit-remaining-requests']).toBe('7');

    // Lowering the cap under the count used blocks at once.
    await putRule(gateway, { user_path: '/adm/edit', limit_key: hour, max_requests: 3 });
    expectRateLimited(await chatAt(gateway, '/adm/edit'), 'rate limit exceeded for /adm/edit: hour request limit of 3 reached');

    // Move hour -> day: the new key starts from zero, the old one is gone.
    await putRule(gateway, { user_path: '/adm/edit', limit_key: { period: 'day' }, max_requests: 3 });
    const moved = expectListing(await deleteRule(gateway, { scope: 'user_path', subject: '/adm/edit', limit_key: hour }));
    const editRules = moved.rate_limits.filter((rule) => rule.subject === '/adm/edit');
    expect(editRules.map((rule) => rule.period)).toEqual(['day']);
    expect(editRules[0]).toMatchObject({ requests_used: 0, requests_remaining: 3 });
    expect((await chatAt(gateway, '/adm/edit')).status).toBe(200);

    // Deleting reset the old counters: the hour key recreated starts at zero too.
    await putRule(gateway, { user_path: '/adm/edit', limit_key: hour, max_requests: 3 });
    expect(await findRule(gateway, 'user_path', '/adm/edit', 'hour')).toMatchObject({ requests_used: 0 });
  });

  it('DELETE: 200 with the list, other rules untouched; an unknown rule is 404 rate_limit_not_found', async () => {
    await putRule(gateway, { user_path: '/adm/del', limit_key: hour, max_requests: 1 });
    await putRule(gateway, { user_path: '/adm/del', limit_key: { period: 'day' }, max_requests: 5 });
    expect((await chatAt(gateway, '/adm/del')).status).toBe(200);
    expect((await chatAt(gateway, '/adm/del')).status).toBe(429);
    const listing = expectListing(await deleteRule(gateway, { user_path: '/ADM/del', limit_key: hour }));
    expect(listing.rate_limits.filter((rule) => rule.subject === '/adm/del').map((rule) => rule.period)).toEqual(['day']);
    expect((await chatAt(gateway, '/adm/del')).status).toBe(200);

    const missing = await deleteRule(gateway, { user_path: '/adm/del', limit_key: hour }, 404);
    expectEnvelope(missing, { status: 404, type: 'not_found_error', code: 'rate_limit_not_found' });
    const never = await deleteRule(gateway, { scope: 'provider', subject: 'nobody', limit_key: { period: 'minute' } }, 404);
    expectEnvelope(never, { status: 404, type: 'not_found_error', code: 'rate_limit_not_found' });
  });

  it('reset-one frees an exhausted rule by {scope, subject, period} or {user_path, period}; unknown -> 404', async () => {
    await putRule(gateway, { user_path: '/adm/one', limit_key: hour, max_requests: 1 });
    await putRule(gateway, { user_path: '/adm/two', limit_key: hour, max_requests: 1 });
    for (const path of ['/adm/one', '/adm/two']) expect((await chatAt(gateway, path)).status).toBe(200);
    expect((await chatAt(gateway, '/adm/one')).status).toBe(429);

    const reply = await call(gateway, '/admin/rate-limits/reset-one', {
      body: { scope: 'user_path', subject: '/adm/one', period: 'hour' },
    });
    const listing = expectListing(reply);
    expect(ruleOf(listing.rate_limits, 'user_path', '/adm/one', 'hour')).toMatchObject({ requests_used: 0, requests_remaining: 1 });
    expect(ruleOf(listing.rate_limits, 'user_path', '/adm/two', 'hour')).toMatchObject({ requests_used: 1 });
    expect((await chatAt(gateway, '/adm/one')).status).toBe(200);
    expect((await chatAt(gateway, '/adm/two')).status).toBe(429);

    expectListing(await call(gateway, '/admin/rate-limits/reset-one', { body: { user_path: '/adm/two', period: 'hour' } }));
    expect((await chatAt(gateway, '/adm/two')).status).toBe(200);

    for (const body of [
      { user_path: '/adm/nothing', period: 'hour' },
      { scope: 'user_path', subject: '/adm/one', period: 'day' },
    ]) {
      expectEnvelope(await call(gateway, '/admin/rate-limits/reset-one', { body }), {
        status: 404,
        type: 'not_found_error',
        code: 'rate_limit_not_found',
      });
    }
  });

  it('reset with confirmation "reset" -> 200 {"status":"ok"} and frees every rule; any other word -> 400', async () => {
    await putRule(gateway, { user_path: '/adm/all-a', limit_key: hour, max_requests: 1 });
    await putRule(gateway, { user_path: '/adm/all-b', limit_key: { period: 'day' }, max_requests: 1 });
    for (const path of ['/adm/all-a', '/adm/all-b']) expect((await chatAt(gateway, path)).status).toBe(200);

    for (const body of [{ confirmation: 'nope' }, { confirmation: '' }, {}]) {
      const refused = await call(gateway, '/admin/rate-limits/reset', { body });
      expectEnvelope(refused, { status: 400, type: 'invalid_request_error' });
    }
    for (const path of ['/adm/all-a', '/adm/all-b']) expect((await chatAt(gateway, path)).status).toBe(429);

    const reply = await call(gateway, '/admin/rate-limits/reset', { body: { confirmation: 'reset' } });
    expect(reply.status, reply.text).toBe(200);
    expect(parseJson(reply.text)).toEqual({ status: 'ok' });
    const rules = (await listRules(gateway)).rate_limits;
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) expect(rule.requests_used, `${rule.subject} ${rule.period}`).toBe(0);
    for (const path of ['/adm/all-a', '/adm/all-b']) expect((await chatAt(gateway, path)).status).toBe(200);
  });

  it('counts a request at admission even when the upstream fails; requests refused before admission count nothing', async () => {
    await putRule(gateway, { user_path: '/adm/count', limit_key: hour, max_requests: 3 });
    expectEnvelope(await chatAt(gateway, '/adm/count', 'openai/error-500'), { status: 500, type: 'provider_error', provider: 'openai' });
    expectEnvelope(await chatAt(gateway, '/adm/count', 'openai/no-such-model'), {
      status: 404,
      type: 'not_found_error',
      code: 'model_not_found',
    });
    const malformed = await call(gateway, '/v1/chat/completions', { headers: { 'x-user-path': '/adm/count' }, body: '{"model":' });
    expectEnvelope(malformed, { status: 400, type: 'invalid_request_error', code: 'invalid_json' });
    expect(await findRule(gateway, 'user_path', '/adm/count', 'hour')).toMatchObject({ requests_used: 1, requests_remaining: 2 });
    const streamed = await chatAt(gateway, '/adm/count', 'openai/mock-model', { stream: true });
    expect(streamed.status).toBe(200);
    expect(streamed.headers['x-ratelimit-remaining-requests']).toBe('1');
    expect((await chatAt(gateway, '/adm/count')).status).toBe(200);
    expect((await chatAt(gateway, '/adm/count')).status).toBe(429);
  });

  it('model and provider subjects are stored lower-case and match the routes case-insensitively', async () => {
    const listing = await putRule(gateway, { scope: 'model', subject: 'OpenAI/GPT-4o', limit_key: hour, max_requests: 1 });
    const modelRule = ruleOf(listing.rate_limits, 'model', 'openai/gpt-4o', 'hour');
    expect(modelRule.user_path).toBeUndefined();
    expect((await chatAt(gateway, '/adm/m', 'openai/gpt-4o')).status).toBe(200);
    expectRateLimited(
      await chatAt(gateway, '/adm/m', 'openai/gpt-4o'),
      'rate limit exceeded for model openai/gpt-4o: hour request limit of 1 reached',
    );
    expect((await chatAt(gateway, '/adm/m', 'openai/mock-model')).status).toBe(200);

    const providers = await putRule(gateway, { scope: 'provider', subject: 'OpenAI-X', limit_key: hour, max_requests: 1 });
    expect(ruleOf(providers.rate_limits, 'provider', 'openai-x', 'hour').user_path).toBeUndefined();
    expect((await chatAt(gateway, '/adm/p', 'openai-x/mock-model')).status).toBe(200);
    expectRateLimited(
      await chatAt(gateway, '/adm/q', 'openai-x/mock-model'),
      'rate limit exceeded for provider openai-x: hour request limit of 1 reached',
    );
    expect(chatRequests(mock)).toHaveLength(3);

    // Deleting with any case of the subject finds the rule.
    await deleteRule(gateway, { scope: 'model', subject: 'openai/GPT-4O', limit_key: hour });
    await deleteRule(gateway, { scope: 'provider', subject: 'OPENAI-X', limit_key: hour });
    expect((await chatAt(gateway, '/adm/m', 'openai/gpt-4o')).status).toBe(200);
    expect((await chatAt(gateway, '/adm/q', 'openai-x/mock-model')).status).toBe(200);
  });
});
