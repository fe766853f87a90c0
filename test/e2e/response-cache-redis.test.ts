import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, chatBody, isHit, type RawReply, rawRequest } from '../support/http.ts';
import type { MockUpstream } from '../support/mock-upstream.ts';
import { testRedisUrl, testServices } from '../support/services.ts';
import { parseSse } from '../support/streams.ts';
import { chatCount, closeAll, instancesEnv, startMocks } from '../support/virtual-models.ts';

// CONTRACT section 8: RESPONSE_CACHE_STORE=redis shares entries between gateway processes;
// without RESPONSE_CACHE_ENABLED (the default) every request goes upstream.

const REDIS_URL = testRedisUrl;

function send(gateway: GatewayProcess, payload: unknown): Promise<RawReply> {
  return rawRequest(`${gateway.url}/v1/chat/completions`, { body: payload, headers: bearer() });
}

/** Redis keeps entries between runs: every body carries a fresh nonce. */
const fresh = (label: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  chatBody('openai/mock-model', { messages: [{ role: 'user', content: `${label} ${randomUUID()}` }], ...extra });

describe.skipIf(!testServices.redis)('response cache in Redis, shared by two gateways', () => {
  let mocks: MockUpstream[];
  let mock: MockUpstream;
  let first: GatewayProcess;
  let second: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(1);
    mock = mocks[0] as MockUpstream;
    const env = instancesEnv(mocks, ['mock-model'], {
      RESPONSE_CACHE_ENABLED: 'true',
      RESPONSE_CACHE_STORE: 'redis',
      RESPONSE_CACHE_TTL_SECONDS: '60',
      REDIS_URL,
    });
    [first, second] = await Promise.all([startGateway({ env }), startGateway({ env })]);
  });

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    await closeAll(mocks ?? []);
  });

  /** Sends to `reader` until a HIT (the writer stores off the response path); at most ~1 s. */
  async function hitOn(reader: GatewayProcess, payload: unknown): Promise<RawReply> {
    for (let attempt = 0; ; attempt += 1) {
      await sleep(100);
      const reply = await send(reader, payload);
      expect(reply.status, reply.text).toBe(200);
      if (isHit(reply) || attempt >= 9) return reply;
    }
  }

  it('an answer stored by one gateway is a HIT on the other, with the same body and no upstream call', async () => {
    const payload = fresh('shared');
    const miss = await send(first, payload);
    expect(miss.status, miss.text).toBe(200);
    expect(isHit(miss)).toBe(false);
    expect(chatCount(mock)).toBe(1);
    // Give the store time to land, then read from the other process.
    await sleep(200);
    const hit = await send(second, payload);
    expect(hit.status, hit.text).toBe(200);
    expect(isHit(hit)).toBe(true);
    expect(hit.text).toBe(miss.text);
    expect(chatCount(mock)).toBe(1);
    // And back the other way.
    const reverse = fresh('reverse');
    expect(isHit(await send(second, reverse))).toBe(false);
    expect(isHit(await hitOn(first, reverse))).toBe(true);
    expect(chatCount(mock)).toBe(2);
  });

  it('a streamed answer stored by one gateway is replayed as SSE by the other', async () => {
    const payload = fresh('stream', { stream: true });
    const miss = await send(first, payload);
    expect(miss.status, miss.text).toBe(200);
    const before = chatCount(mock);
    const hit = await hitOn(second, payload);
    expect(isHit(hit)).toBe(true);
    expect(String(hit.headers['content-type'])).toMatch(/^text\/event-stream/);
    expect(parseSse(hit.text)).toEqual(parseSse(miss.text));
    expect(chatCount(mock)).toBe(before);
  });
});

describe('response cache disabled (the default)', () => {
  let mocks: MockUpstream[];
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(1);
    mock = mocks[0] as MockUpstream;
    gateway = await startGateway({ env: instancesEnv(mocks, ['mock-model']) });
  });

  afterAll(async () => {
    await gateway?.stop();
    await closeAll(mocks ?? []);
  });

  it('repeated identical requests all go upstream and carry no X-Cache header', async () => {
    const payload = chatBody('openai/mock-model');
    const replies = [];
    for (let attempt = 0; attempt < 3; attempt += 1) replies.push(await send(gateway, payload));
    for (const reply of replies) {
      expect(reply.status, reply.text).toBe(200);
      expect(reply.headers['x-cache']).toBeUndefined();
    }
    expect(chatCount(mock)).toBe(3);
    // Each answer came from the upstream (the mock numbers its completions).
    expect(new Set(replies.map((reply) => reply.text)).size).toBe(3);
  });
});

describe('response cache in Redis, with Redis unreachable', () => {
  let mocks: MockUpstream[];
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(1);
    mock = mocks[0] as MockUpstream;
    const env = instancesEnv(mocks, ['mock-model'], {
      RESPONSE_CACHE_ENABLED: 'true',
      RESPONSE_CACHE_STORE: 'redis',
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    gateway = await startGateway({ env });
  });

  afterAll(async () => {
    await gateway?.stop();
    await closeAll(mocks ?? []);
  });

  it('requests are still served (as misses) and /health/ready reports the cache down', async () => {
    const payload = fresh('no redis');
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const reply = await send(gateway, payload);
      expect(reply.status, reply.text).toBe(200);
      expect(isHit(reply)).toBe(false);
    }
    expect(chatCount(mock)).toBe(2);
    const ready = await rawRequest(`${gateway.url}/health/ready`);
    const body = JSON.parse(ready.text) as { status?: unknown; components?: { response_cache?: { status?: unknown } } };
    expect(body.components?.response_cache?.status, ready.text).toBe('down');
    expect(body.status).not.toBe('ok');
  });
});
