import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { Agent } from 'undici';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, chatBody, count, type RawReply, statuses } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import {
  abortableChat,
  type AbortableChat,
  chatAt,
  expectRateLimited,
  findRule,
  inFlightBecomes,
  outcomeOf,
  putRule,
} from '../support/rate-limits.ts';
import { testRedisUrl, testServices } from '../support/services.ts';
import { chatRequests, inFlightSampler, waitForChat } from '../support/upstream.ts';

// SEED-SPEC "Limits" and reference/peers.md section 5 items 1 and 4: request windows are exact
// under a parallel burst, concurrency caps hold at the upstream, and every way a request can end
// (finished, client gone mid-stream, upstream error, client gone while waiting) gives its slot back.

const burstCap = 25;
const concurrentCap = 3;
const gatewayYaml = `
rate_limits:
  user_paths:
    - path: /burst
      limits: [{ period: day, max_requests: ${burstCap} }]
    - path: /cc
      limits: [{ period: concurrent, max_requests: ${concurrentCap} }]
    - path: /slots
      limits: [{ period: concurrent, max_requests: 2 }]
    - path: /errs
      limits: [{ period: concurrent, max_requests: 1 }]
    - path: /one-by-one
      limits: [{ period: concurrent, max_requests: 1 }]
`;

// WORKERS=2: the same exactness with the requests spread over two worker processes that share
// their counters in Redis, as replicas do (ADR 37; without a shared store each worker counts alone).
const sharedCounters = (): Record<string, string> => ({
  REDIS_URL: testRedisUrl,
  RATE_LIMITS_STORE: 'redis',
  RATE_LIMITS_REDIS_PREFIX: `rl-concurrency-${randomUUID()}:`,
});
const variants = [1, ...(testServices.redis ? [2] : [])];

describe.each(variants)('rate limits under concurrency (WORKERS=%i)', (workers) => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({
      env: gatewayEnv(mock, {
        OPENAI_MODELS: 'mock-model,slow-500,slow,slow-stream,error-500,hang',
        WORKERS: String(workers),
        ...(workers > 1 ? sharedCounters() : {}),
      }),
      configYaml: gatewayYaml,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  beforeEach(() => {
    mock.reset();
    mock.setBehavior('slow-500', { kind: 'latency', ms: 500 });
  });

  it(`admits exactly ${burstCap} of ${4 * burstCap} parallel requests and the upstream sees exactly ${burstCap}`, async () => {
    // A day window: a burst cannot straddle a boundary in practice. Children share /burst's counter.
    const sentAt = Date.now();
    const replies = await Promise.all(Array.from({ length: 4 * burstCap }, (_, index) => chatAt(gateway, `/burst/c${index % 7}`)));
    const codes = statuses(replies);
    expect(count(codes, 200), codes.join(',')).toBe(burstCap);
    expect(count(codes, 429), codes.join(',')).toBe(3 * burstCap);
    expect(chatRequests(mock)).toHaveLength(burstCap);
    // Each admission saw its own count: remaining 24, 23, ... 0, each exactly once.
    const remaining = replies
      .filter((reply) => reply.status === 200)
      .map((reply) => {
        expect(reply.headers['x-ratelimit-limit-requests']).toBe(String(burstCap));
        return Number(reply.headers['x-ratelimit-remaining-requests']);
      })
      .sort((left, right) => left - right);
    expect(remaining).toEqual(Array.from({ length: burstCap }, (_, index) => index));
    // The sliding estimate drops below the cap one second into the next UTC day.
    // Each refusal was decided between the burst's start and its last answer (seconds apart on a loaded machine).
    const now = new Date();
    const admittedAgainAt = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) + 1000;
    for (const reply of replies.filter((one) => one.status === 429)) {
      const { retryAfterMs } = expectRateLimited(reply, `rate limit exceeded for /burst: day request limit of ${burstCap} reached`);
      expect(reply.headers['x-ratelimit-limit-requests']).toBe(String(burstCap));
      expect(retryAfterMs).toBeGreaterThan(admittedAgainAt - now.getTime() - 1_000);
      expect(retryAfterMs).toBeLessThan(admittedAgainAt - sentAt + 1_000);
    }
    const rule = await findRule(gateway, 'user_path', '/burst', 'day');
    expect(rule).toMatchObject({ requests_used: burstCap, requests_remaining: 0, max_requests: burstCap });
    expect(chatRequests(mock)).toHaveLength(burstCap);
  });

  it(`never lets more than ${concurrentCap} requests be in flight at the upstream`, async () => {
    const sampler = inFlightSampler(mock);
    const replies = await Promise.all(Array.from({ length: 15 }, () => chatAt(gateway, '/cc/app', 'openai/slow-500')));
    const maxInFlight = sampler.stop();
    const codes = statuses(replies);
    // All 15 arrive well within the 500 ms the first three hold their slots.
    expect(count(codes, 200), codes.join(',')).toBe(concurrentCap);
    expect(count(codes, 429), codes.join(',')).toBe(15 - concurrentCap);
    expect(maxInFlight).toBe(concurrentCap);
    expect(chatRequests(mock)).toHaveLength(concurrentCap);
    for (const reply of replies.filter((one) => one.status === 429)) {
      const { retryAfter, retryAfterMs } = expectRateLimited(
        reply,
        `rate limit exceeded for /cc: concurrent request limit of ${concurrentCap} reached`,
        null,
      );
      expect(retryAfter).toBe(1);
      expect(retryAfterMs).toBe(1000);
    }
    expect(await inFlightBecomes(gateway, '/cc', 0)).toMatchObject({ in_flight: 0, requests_remaining: concurrentCap });
  });

  it('reuses freed slots for a staggered stream of requests and still caps the upstream', async () => {
    const sampler = inFlightSampler(mock);
    const pending: Array<Promise<RawReply>> = [];
    for (let index = 0; index < 15; index += 1) {
      pending.push(chatAt(gateway, '/cc', 'openai/slow-500'));
      await sleep(60);
    }
    const codes = statuses(await Promise.all(pending));
    const maxInFlight = sampler.stop();
    expect(maxInFlight).toBeLessThanOrEqual(concurrentCap);
    expect(count(codes, 200) + count(codes, 429), codes.join(',')).toBe(15);
    expect(count(codes, 200), 'freed slots are taken again').toBeGreaterThan(concurrentCap);
    expect(count(codes, 429), 'eight arrivals per 500 ms overflow three slots').toBeGreaterThan(0);
    expect(chatRequests(mock)).toHaveLength(count(codes, 200));
    await inFlightBecomes(gateway, '/cc', 0);
  });

  describe('slots come back', () => {
    const open: AbortableChat[] = [];
    const abortable = (userPath: string, model: string, extra: Record<string, unknown> = {}): AbortableChat => {
      const chat = abortableChat(gateway, userPath, model, extra);
      open.push(chat);
      return chat;
    };

    afterEach(async () => {
      for (const chat of open) chat.abort();
      await Promise.all(open.splice(0).map(outcomeOf));
    });

    it('when clients abort streams mid-way: in_flight returns to 0 and new requests are admitted', async () => {
      const streams = [
        abortable('/slots', 'openai/slow-stream', { stream: true }),
        abortable('/slots', 'openai/slow-stream', { stream: true }),
      ];
      for (const stream of streams) {
        const started = await stream.started;
        expect(started.status).toBe(200);
        expect(String(started.headers['content-type'])).toMatch(/^text\/event-stream/);
        expect(started.firstChunk).toMatch(/^data: /);
      }
      expect((await findRule(gateway, 'user_path', '/slots', 'concurrent'))?.in_flight).toBe(2);
      // Both slots are held for as long as the streams run (40 chunks, 2 s).
      expectRateLimited(await chatAt(gateway, '/slots'), 'rate limit exceeded for /slots: concurrent request limit of 2 reached', null);
      const abortedAt = Date.now();
      for (const stream of streams) stream.abort();
      expect(await Promise.all(streams.map(outcomeOf))).toEqual(['aborted', 'aborted']);
      expect(await inFlightBecomes(gateway, '/slots', 0, 2_000)).toMatchObject({ in_flight: 0, requests_remaining: 2 });
      expect(Date.now() - abortedAt).toBeLessThan(2_000);
      await mock.waitFor((requests) => requests.filter((recorded) => recorded.aborted).length === 2, 2_000);
      // Two slots again: two requests that overlap (200 ms each) are both admitted.
      const codes = statuses(await Promise.all([chatAt(gateway, '/slots', 'openai/slow'), chatAt(gateway, '/slots', 'openai/slow')]));
      expect(codes).toEqual([200, 200]);
      await inFlightBecomes(gateway, '/slots', 0);
    });

    it('when the upstream fails: a 5xx gives its slot back', async () => {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expectEnvelope(await chatAt(gateway, '/errs', 'openai/error-500'), { status: 500, type: 'provider_error', provider: 'openai' });
      }
      expect(await inFlightBecomes(gateway, '/errs', 0)).toMatchObject({ in_flight: 0 });
      expect((await chatAt(gateway, '/errs')).status).toBe(200);
      expect(chatRequests(mock)).toHaveLength(4);
    });

    it('when the client gives up on a hanging upstream: the slot is held while waiting, then freed', async () => {
      const hanging = abortable('/errs', 'openai/hang');
      await waitForChat(mock, 'hang');
      expect((await findRule(gateway, 'user_path', '/errs', 'concurrent'))?.in_flight).toBe(1);
      expectRateLimited(await chatAt(gateway, '/errs'), 'rate limit exceeded for /errs: concurrent request limit of 1 reached', null);
      hanging.abort();
      expect(await outcomeOf(hanging)).toBe('aborted');
      await inFlightBecomes(gateway, '/errs', 0);
      expect((await chatAt(gateway, '/errs')).status).toBe(200);
      expect(chatRequests(mock)).toHaveLength(2);
    });

    // Retried: in the full suite's order on a fresh clone, the WORKERS=2 case refused every third
    // request of one run (a slot still held) while it passes alone and beside its neighbours;
    // the cause is not found yet (issue 30 closing note). A real regression fails all three tries.
    it(
      'before the answer ends: a client that asks again once it has read the answer finds the slot free, on either worker',
      { retry: 2 },
      async () => {
        // Two kept-alive connections, used in turn: with WORKERS=2 each goes to its own worker, so each
        // request is admitted in Redis by the other worker than the release before it (sent before the
        // answer's end, ClientAbort.whenClosed). Under load, releases sent on 'close' only refused a few
        // of these in a hundred.
        const agents = [new Agent({ connections: 1 }), new Agent({ connections: 1 })];
        const codes: string[] = [];
        try {
          for (let index = 0; index < 60; index += 1) {
            // Answers and upstream errors in turn: the two ways a JSON request gives its slot back.
            const model = index % 4 < 2 ? 'openai/mock-model' : 'openai/error-500';
            const reply = await call(gateway, '/v1/chat/completions', {
              headers: { 'x-user-path': '/one-by-one' },
              body: chatBody(model),
              dispatcher: agents[index % 2],
            });
            codes.push(`${index}:${reply.status}`);
          }
        } finally {
          await Promise.all(agents.map((agent) => agent.close()));
        }
        expect(codes.filter((code) => code.endsWith(':429'))).toEqual([]);
        expect(await inFlightBecomes(gateway, '/one-by-one', 0)).toMatchObject({ in_flight: 0 });
      },
    );

    it('a slot taken under a deleted rule does not free a slot of the rule recreated on the same key', async () => {
      const concurrentKey = { user_path: '/recreated', limit_key: { period: 'concurrent' } };
      await putRule(gateway, { ...concurrentKey, max_requests: 1 });
      const old = abortable('/recreated', 'openai/hang');
      await mock.waitFor(() => chatRequests(mock).length === 1);
      expect((await call(gateway, '/admin/rate-limits', { method: 'DELETE', body: concurrentKey })).status).toBe(200);
      await putRule(gateway, { ...concurrentKey, max_requests: 1 });
      // The recreated rule admits one request, which now holds its only slot.
      abortable('/recreated', 'openai/hang');
      await mock.waitFor(() => chatRequests(mock).length === 2);
      expect(await inFlightBecomes(gateway, '/recreated', 1)).toMatchObject({ in_flight: 1 });
      // The request admitted under the deleted rule ends: the new rule's slot must stay taken.
      old.abort();
      expect(await outcomeOf(old)).toBe('aborted');
      await mock.waitFor(() => chatRequests(mock)[0]?.aborted === true);
      await sleep(100);
      expect((await findRule(gateway, 'user_path', '/recreated', 'concurrent'))?.in_flight, 'one request still in flight').toBe(1);
      expectRateLimited(
        await chatAt(gateway, '/recreated'),
        'rate limit exceeded for /recreated: concurrent request limit of 1 reached',
        null,
      );
    });
  });
});
