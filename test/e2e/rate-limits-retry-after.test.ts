import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import type { RawReply } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { chatAt, expectRateLimited, findRule, rateLimitHeaders } from '../support/rate-limits.ts';
import { eventually } from '../support/wait.ts';

// CONTRACT section 6 and SEED-SPEC "Errors" rule 1: Retry-After is the exact whole number of
// seconds after which a retry is admitted under the sliding window (which can be past the next
// window boundary); the longest-blocking rule is reported; success headers come from the most
// constrained rule. Windows are epoch-aligned, so the tests pick their moment on the wall clock
// (the gateway runs on the same machine) and keep at least ~400 ms from every decision point.

const period = 4;
const periodMs = period * 1000;
const gatewayYaml = `
rate_limits:
  user_paths:
    - path: /rt
      limits: [{ period_seconds: ${period}, max_requests: 2 }]
    - path: /rt-tokens
      limits: [{ period_seconds: ${period}, max_tokens: 10 }]
    - path: /both
      limits:
        - { period: minute, max_requests: 1 }
        - { period: day, max_requests: 1 }
    - path: /hdr
      limits: [{ period: hour, max_requests: 100, max_tokens: 1000 }]
    - path: /hdr/team
      limits: [{ period: hour, max_requests: 5 }]
    - path: /hdr-stream
      limits: [{ period: hour, max_requests: 10, max_tokens: 1000 }]
`;

/** Sleeps until wall-clock time `at` (epoch ms). */
async function sleepUntil(at: number): Promise<void> {
  const wait = at - Date.now();
  if (wait > 0) await sleep(wait);
}

/**
 * Picks the moment of the 429: the next half second at least 600 ms away (time to fill the rule
 * first) inside the current ${period} s window, or inside the next window when this one is almost
 * over. Sending the 429 request at a half second keeps it, and the retries timed from it, ~500 ms
 * away from the whole seconds at which the sliding estimate changes.
 */
async function planWindow(): Promise<{ windowStart: number; rejectAt: number }> {
  const now = Date.now();
  const halfSecondAfter = (at: number): number => Math.ceil((at + 600 - 500) / 1000) * 1000 + 500;
  const windowStart = now - (now % periodMs);
  if (halfSecondAfter(now) < windowStart + periodMs) return { windowStart, rejectAt: halfSecondAfter(now) };
  await sleepUntil(windowStart + periodMs + 20);
  return { windowStart: windowStart + periodMs, rejectAt: windowStart + periodMs + 1500 };
}

interface Scenario {
  path: string;
  message: string;
  trio: 'requests' | 'tokens';
  /** Requests that fill the window before the 429. */
  fill: number;
  /** Seconds after the window start at which a retry is admitted again. */
  admittedAfter: number;
}

/**
 * Fills the rule, then checks its 429 against the wall clock: a retry Retry-After - 1 seconds
 * later is still refused, one Retry-After seconds later is admitted.
 */
async function retryScenario(gateway: GatewayProcess, scenario: Scenario): Promise<void> {
  const { windowStart, rejectAt } = await planWindow();
  for (let index = 0; index < scenario.fill; index += 1) expect((await chatAt(gateway, scenario.path)).status).toBe(200);
  if (scenario.trio === 'tokens') {
    await eventually(
      async () => ((await findRule(gateway, 'user_path', scenario.path, `${period}s`))?.tokens_used === 17 ? true : undefined),
      'tokens charged',
    );
  }
  expect(Date.now(), 'filling the rule took too long').toBeLessThan(rejectAt);
  await sleepUntil(rejectAt);
  const sentAt = Date.now();
  const rejected = await chatAt(gateway, scenario.path);
  const receivedAt = Date.now();
  const { retryAfter, retryAfterMs } = expectRateLimited(rejected, scenario.message, scenario.trio);
  const admittedAt = windowStart + scenario.admittedAfter * 1000;
  expect(admittedAt, 'this case recovers after the next window boundary').toBeGreaterThan(windowStart + periodMs);
  expect(retryAfterMs).toBeGreaterThanOrEqual(admittedAt - receivedAt);
  expect(retryAfterMs).toBeLessThanOrEqual(admittedAt - sentAt);
  expect(retryAfter).toBe(Math.ceil((admittedAt - sentAt) / 1000));

  // Retry-After - 1 seconds after the 429: past the next window boundary, still refused.
  await sleepUntil(sentAt + (retryAfter - 1) * 1000);
  const earlyAt = Date.now();
  const early = await chatAt(gateway, scenario.path);
  expect(earlyAt, 'the early retry left too late to judge (machine overloaded)').toBeLessThan(admittedAt - 100);
  expect(earlyAt).toBeGreaterThan(windowStart + periodMs);
  expectRateLimited(early, scenario.message, scenario.trio);

  // Retry-After seconds after the 429: admitted.
  await sleepUntil(sentAt + retryAfter * 1000);
  const onTime = await chatAt(gateway, scenario.path);
  expect(onTime.status, onTime.text).toBe(200);
}

describe('Retry-After and x-ratelimit headers', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model' }), configYaml: gatewayYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  // Two rules with their own counters, run side by side to keep the suite short.
  it.concurrent('requests: a retry at Retry-After is admitted, one second earlier is not', async () => {
    // 2 requests in window W: at W+4 the estimate is still 2; at W+5 it is floor(2 * 3/4) = 1.
    await retryScenario(gateway, {
      path: '/rt',
      message: 'rate limit exceeded for /rt: 4s request limit of 2 reached',
      trio: 'requests',
      fill: 2,
      admittedAfter: period + 1,
    });
  });

  it.concurrent('tokens: a retry at Retry-After is admitted, one second earlier is not', async () => {
    // 17 tokens in window W, cap 10: floor(17 * 3/4) = 12 at W+5, floor(17 * 2/4) = 8 at W+6.
    await retryScenario(gateway, {
      path: '/rt-tokens',
      message: 'rate limit exceeded for /rt-tokens: 4s token limit of 10 reached',
      trio: 'tokens',
      fill: 1,
      admittedAfter: period + 2,
    });
  });

  it('reports the rule that blocks longest when several are exhausted', async () => {
    expect((await chatAt(gateway, '/both')).status).toBe(200);
    const sentAt = Date.now();
    const reply = await chatAt(gateway, '/both/child');
    const { retryAfterMs } = expectRateLimited(reply, 'rate limit exceeded for /both: day request limit of 1 reached');
    expect(reply.headers['x-ratelimit-limit-requests']).toBe('1');
    const now = new Date(sentAt);
    const nextDay = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    // One request slides out of the day window one second into the next day.
    expect(Math.abs(retryAfterMs - (nextDay + 1000 - sentAt))).toBeLessThan(1_000);
    expect(reply.headers['x-ratelimit-reset-requests']).toBe(reply.headers['retry-after']);
  });

  it('takes each success trio from the most constrained matching rule', async () => {
    const expectTrios = (reply: RawReply, requestsRemaining: number, tokensRemaining: number): void => {
      expect(reply.status, reply.text).toBe(200);
      const headers = rateLimitHeaders(reply);
      const hourLeft = Math.ceil((3_600_000 - (Date.now() % 3_600_000)) / 1000);
      expect(Number(headers['x-ratelimit-reset-requests'])).toBeGreaterThanOrEqual(1);
      expect(Math.abs(Number(headers['x-ratelimit-reset-requests']) - hourLeft)).toBeLessThanOrEqual(1);
      expect(headers).toEqual({
        'x-ratelimit-limit-requests': '5',
        'x-ratelimit-remaining-requests': String(requestsRemaining),
        'x-ratelimit-reset-requests': headers['x-ratelimit-reset-requests'],
        'x-ratelimit-limit-tokens': '1000',
        'x-ratelimit-remaining-tokens': String(tokensRemaining),
        'x-ratelimit-reset-tokens': headers['x-ratelimit-reset-requests'],
      });
    };
    // /hdr/team (5 requests) is tighter than /hdr (100 requests); only /hdr caps tokens.
    expectTrios(await chatAt(gateway, '/hdr/team/alice'), 4, 1000);
    await eventually(
      async () => ((await findRule(gateway, 'user_path', '/hdr', 'hour'))?.tokens_used === 17 ? true : undefined),
      'tokens charged',
    );
    expectTrios(await chatAt(gateway, '/HDR/Team/bob'), 3, 983);
    // Outside /hdr/team only the /hdr rule applies.
    const sibling = rateLimitHeaders(await chatAt(gateway, '/hdr/other'));
    expect(sibling['x-ratelimit-limit-requests']).toBe('100');
    expect(sibling['x-ratelimit-remaining-requests']).toBe('97');
    expect(sibling['x-ratelimit-remaining-tokens']).toBe('966');
    expect(rateLimitHeaders(await chatAt(gateway, '/hdr-team'))).toEqual({});
  });

  it('a stream carries the headers, and its tokens are charged once it ends (usage not asked by the client)', async () => {
    const reply = await chatAt(gateway, '/hdr-stream', 'openai/mock-model', { stream: true });
    expect(reply.status).toBe(200);
    expect(String(reply.headers['content-type'])).toMatch(/^text\/event-stream/);
    expect(reply.text).not.toContain('"usage":{');
    expect(rateLimitHeaders(reply)).toMatchObject({
      'x-ratelimit-limit-requests': '10',
      'x-ratelimit-remaining-requests': '9',
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '1000',
    });
    const charged = await eventually(async () => {
      const rule = await findRule(gateway, 'user_path', '/hdr-stream', 'hour');
      return rule !== undefined && rule.tokens_used > 0 ? rule : undefined;
    }, 'stream tokens charged');
    expect(charged).toMatchObject({ tokens_used: 17, tokens_remaining: 983, requests_used: 1 });
  });
});
