import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { expectClientError, rejectionOf } from '../support/clients.ts';
import { gatewayEnv, type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { call, chatBody } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { chatAt, expectRateLimited, findRule, listRules, rateLimitHeaders } from '../support/rate-limits.ts';
import { chatRequests } from '../support/upstream.ts';
import { eventually } from '../support/wait.ts';

// SEED-SPEC "Configuration declaration" and "Errors" rules 1 and 3: rules declared by
// SET_RATE_LIMIT_*, SET_PROVIDER_RATE_LIMIT_* and YAML rate_limits, enforced over HTTP with the
// 429 of CONTRACT section 6; token caps need usage tracking (SEED-SPEC "Enabling").

const gatewayYaml = `
rate_limits:
  user_paths:
    - path: /team/rl
      limits: [{ period: minute, max_requests: 100 }]
    - path: /yaml
      limits: [{ period: hour, max_requests: 1 }]
  models:
    - model: openai-free/mock-model-2
      limits: [{ period: minute, max_requests: 1 }]
    - model: Mock-Model-3
      limits: [{ period: hour, max_requests: 1 }]
`;

/** Instances: openai and openai-east (each 1 request/minute), openai-free and openai-spare (unlimited). */
function instancesEnv(mock: MockUpstream): Record<string, string> {
  const models = 'mock-model,mock-model-2,mock-model-3';
  const instance = (name: string): Record<string, string> => ({
    [`OPENAI_${name}_API_KEY`]: 'sk-upstream',
    [`OPENAI_${name}_BASE_URL`]: mock.url,
    [`OPENAI_${name}_MODELS`]: models,
  });
  return { OPENAI_MODELS: models, ...instance('EAST'), ...instance('FREE'), ...instance('SPARE') };
}

const tokenWarning = /token rate limits are configured but USAGE_ENABLED is off/;
const logsWarning = (gateway: GatewayProcess): boolean =>
  gateway.logs().some((line) => line['level'] === 40 && tokenWarning.test(String(line['msg'])));

describe('rate limits declared in environment and YAML', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let usageOff: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    [gateway, usageOff] = await Promise.all([
      startGateway({
        env: gatewayEnv(mock, {
          ...instancesEnv(mock),
          SET_RATE_LIMIT_TEAM__RL: 'rpm=2',
          SET_RATE_LIMIT_TOK: 'tpm=5',
          SET_RATE_LIMIT_TREE: 'rph=2',
          SET_RATE_LIMIT_SDK: 'rpm=1',
          SET_RATE_LIMIT_JSON: '[{"period_seconds": 7200, "max_requests": 1}]',
          SET_PROVIDER_RATE_LIMIT_OPENAI: 'rpm=1',
          SET_PROVIDER_RATE_LIMIT_OPENAI_EAST: 'rpm=1',
        }),
        configYaml: gatewayYaml,
      }),
      startGateway({
        env: gatewayEnv(mock, {
          OPENAI_MODELS: 'mock-model',
          USAGE_ENABLED: 'false',
          SET_RATE_LIMIT_TOK: 'tpm=5',
          SET_RATE_LIMIT_: 'rph=50',
        }),
      }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), usageOff?.stop()]);
    await mock?.close();
  });

  beforeEach(() => {
    mock.reset();
  });

  it('SET_RATE_LIMIT_TEAM__RL=rpm=2: two 200s with headers, then the 429 of CONTRACT 6 without an upstream call', async () => {
    const first = await chatAt(gateway, '/team/rl', 'openai-free/mock-model');
    const second = await chatAt(gateway, '/team/rl', 'openai-free/mock-model');
    for (const [reply, remaining] of [
      [first, '1'],
      [second, '0'],
    ] as const) {
      expect(reply.status, reply.text).toBe(200);
      expect(reply.headers['x-ratelimit-limit-requests']).toBe('2');
      expect(reply.headers['x-ratelimit-remaining-requests']).toBe(remaining);
      const reset = Number(reply.headers['x-ratelimit-reset-requests']);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
      expect(reply.headers['x-ratelimit-limit-tokens']).toBeUndefined();
    }
    const third = await chatAt(gateway, '/team/rl', 'openai-free/mock-model');
    const { retryAfter } = expectRateLimited(third, 'rate limit exceeded for /team/rl: minute request limit of 2 reached');
    expect(retryAfter).toBeLessThanOrEqual(120);
    expect(third.headers['x-ratelimit-limit-requests']).toBe('2');
    expect(third.headers['x-ratelimit-reset-requests']).toBe(String(retryAfter));
    expect(chatRequests(mock)).toHaveLength(2);

    const other = await chatAt(gateway, '/other', 'openai-free/mock-model');
    expect(other.status).toBe(200);
    expect(rateLimitHeaders(other)).toEqual({});
    // The variable replaced the YAML entry of the same path (100 per minute).
    const teamRules = (await listRules(gateway)).rate_limits.filter((rule) => rule.subject === '/team/rl');
    expect(teamRules).toHaveLength(1);
    expect(teamRules[0]).toMatchObject({ scope: 'user_path', period: 'minute', max_requests: 2, origin: 'config', requests_used: 2 });
  });

  it('SET_PROVIDER_RATE_LIMIT_*: a saturated provider answers 429 with an accurate Retry-After, upstream not called', async () => {
    const firstAt = Date.now();
    expect((await chatAt(gateway, '/p', 'openai/mock-model')).status).toBe(200);
    const rejected = await chatAt(gateway, '/p', 'openai/mock-model');
    const sentAt = Date.now();
    const { retryAfterMs } = expectRateLimited(rejected, 'rate limit exceeded for provider openai: minute request limit of 1 reached');
    // One request in the first request's minute slides out one second into the next minute.
    const admittedAt = firstAt - (firstAt % 60_000) + 61_000;
    expect(Math.abs(retryAfterMs - (admittedAt - sentAt))).toBeLessThan(1_000);
    expect(chatRequests(mock)).toHaveLength(1);
    // Another model on the same instance shares the provider counter; other instances are unaffected.
    expect((await chatAt(gateway, '/p', 'openai/mock-model-2')).status).toBe(429);
    expect((await chatAt(gateway, '/p', 'openai-free/mock-model')).status).toBe(200);
    // OPENAI_EAST -> instance openai-east, with a counter of its own.
    expect((await chatAt(gateway, '/p', 'openai-east/mock-model')).status).toBe(200);
    expectRateLimited(
      await chatAt(gateway, '/q', 'openai-east/mock-model'),
      'rate limit exceeded for provider openai-east: minute request limit of 1 reached',
    );
    expect(chatRequests(mock)).toHaveLength(3);
    expect(await findRule(gateway, 'provider', 'openai-east', 'minute')).toMatchObject({ origin: 'config', max_requests: 1 });
  });

  it('YAML rate_limits.models: a qualified subject limits one route, a bare one the model on every provider', async () => {
    expect((await chatAt(gateway, '/m', 'openai-free/mock-model-2')).status).toBe(200);
    expectRateLimited(
      await chatAt(gateway, '/m', 'openai-free/mock-model-2'),
      'rate limit exceeded for model openai-free/mock-model-2: minute request limit of 1 reached',
    );
    expect((await chatAt(gateway, '/m', 'openai-spare/mock-model-2')).status).toBe(200);
    expect((await chatAt(gateway, '/m', 'openai-free/mock-model-3')).status).toBe(200);
    expectRateLimited(
      await chatAt(gateway, '/m', 'openai-spare/mock-model-3'),
      'rate limit exceeded for model mock-model-3: hour request limit of 1 reached',
    );
    expect(chatRequests(mock)).toHaveLength(3);
    expect(await findRule(gateway, 'model', 'mock-model-3', 'hour')).toMatchObject({ origin: 'config', requests_used: 1 });
    expect((await findRule(gateway, 'model', 'mock-model-3', 'hour'))?.user_path).toBeUndefined();
  });

  it('YAML and JSON-array rules: custom windows are labelled <n>s; a path rule covers its subtree, case-insensitively', async () => {
    expect((await chatAt(gateway, '/json', 'openai-free/mock-model')).status).toBe(200);
    expectRateLimited(
      await chatAt(gateway, '/json/deeper', 'openai-free/mock-model'),
      'rate limit exceeded for /json: 7200s request limit of 1 reached',
    );
    expect(await findRule(gateway, 'user_path', '/json', '7200s')).toMatchObject({ period_seconds: 7200, origin: 'config' });
    expect((await chatAt(gateway, '/yaml', 'openai-free/mock-model')).status).toBe(200);
    expectRateLimited(
      await chatAt(gateway, '/yaml', 'openai-free/mock-model'),
      'rate limit exceeded for /yaml: hour request limit of 1 reached',
    );

    expect((await chatAt(gateway, '/tree/a', 'openai-free/mock-model')).status).toBe(200);
    expect((await chatAt(gateway, '/TREE/b', 'openai-free/mock-model')).status).toBe(200);
    expectRateLimited(
      await chatAt(gateway, '/Tree', 'openai-free/mock-model'),
      'rate limit exceeded for /tree: hour request limit of 2 reached',
    );
    const sibling = await chatAt(gateway, '/tree-x', 'openai-free/mock-model');
    expect(sibling.status).toBe(200);
    expect(rateLimitHeaders(sibling)).toEqual({});
    expect(chatRequests(mock)).toHaveLength(5);
  });

  it('tpm=5: the first request passes, once its tokens land the next is 429 with the token trio', async () => {
    const first = await chatAt(gateway, '/tok', 'openai-free/mock-model');
    expect(first.status, first.text).toBe(200);
    expect(rateLimitHeaders(first)).toMatchObject({ 'x-ratelimit-limit-tokens': '5', 'x-ratelimit-remaining-tokens': '5' });
    expect(first.headers['x-ratelimit-limit-requests']).toBeUndefined();
    await eventually(
      async () => ((await findRule(gateway, 'user_path', '/tok', 'minute'))?.tokens_used === 17 ? true : undefined),
      '17 tokens charged to /tok',
    );
    const second = await chatAt(gateway, '/tok', 'openai-free/mock-model');
    const { retryAfter } = expectRateLimited(second, 'rate limit exceeded for /tok: minute token limit of 5 reached', 'tokens');
    expect(second.headers['x-ratelimit-limit-tokens']).toBe('5');
    // 17 tokens only fall below 5 at 43 s into the next minute: floor(17 * 17/60) = 4.
    expect(retryAfter).toBeGreaterThan(40);
    expect(retryAfter).toBeLessThanOrEqual(103);
    expect(chatRequests(mock)).toHaveLength(1);
    expect(await findRule(gateway, 'user_path', '/tok', 'minute')).toMatchObject({
      tokens_remaining: 0,
      max_tokens: 5,
      max_requests: null,
    });
  });

  it('the openai client sees the 429 as OpenAI.RateLimitError, streaming or not', async () => {
    const client = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: MASTER_KEY,
      maxRetries: 0,
      defaultHeaders: { 'x-user-path': '/sdk' },
    });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    await client.chat.completions.create({ model: 'openai-free/mock-model', messages });
    for (const stream of [false, true]) {
      const thrown = await rejectionOf(client.chat.completions.create({ model: 'openai-free/mock-model', messages, stream }));
      expect(thrown).toBeInstanceOf(OpenAI.RateLimitError);
      const error = expectClientError(thrown, {
        status: 429,
        type: 'rate_limit_error',
        provider: 'ratelimit',
        code: 'rate_limit_exceeded',
        param: null,
      });
      expect(error.message).toBe('rate limit exceeded for /sdk: minute request limit of 1 reached');
      const rateLimitError = thrown as InstanceType<typeof OpenAI.RateLimitError>;
      expect(rateLimitError.code).toBe('rate_limit_exceeded');
      expect(Number(rateLimitError.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(chatRequests(mock)).toHaveLength(1);
    expect(logsWarning(gateway), 'no warning while usage tracking is on').toBe(false);
  });

  it('USAGE_ENABLED=false: the gateway warns at startup and does not enforce token caps; request caps still apply', async () => {
    expect(logsWarning(usageOff)).toBe(true);
    for (let index = 0; index < 3; index += 1) expect((await chatAt(usageOff, '/tok', 'openai/mock-model')).status).toBe(200);
    expect(chatRequests(mock)).toHaveLength(3);
    expect(await findRule(usageOff, 'user_path', '/tok', 'minute')).toMatchObject({ tokens_used: 0, max_tokens: 5 });
    // SET_RATE_LIMIT_ (empty suffix) is the root rule: it covers requests without a user path.
    const root = await findRule(usageOff, 'user_path', '/', 'hour');
    expect(root).toMatchObject({ origin: 'config', max_requests: 50, requests_used: 3 });
    const bare = await call(usageOff, '/v1/chat/completions', { body: chatBody('openai/mock-model') });
    expect(bare.status).toBe(200);
    expect(bare.headers['x-ratelimit-limit-requests']).toBe('50');
    expect(bare.headers['x-ratelimit-remaining-requests']).toBe('46');
  });
});
