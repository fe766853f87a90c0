import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { openAIClient } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, isHit, parseJson, type RawReply, rawRequest } from '../support/http.ts';
import type { MockUpstream } from '../support/mock-upstream.ts';
import { rateLimitHeaderNames, rateLimitRules } from '../support/rate-limits.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { parseSse } from '../support/streams.ts';
import { chatCount, closeAll, instancesEnv, startMocks } from '../support/virtual-models.ts';

// SEED-SPEC function 6 and CONTRACT section 8: with RESPONSE_CACHE_ENABLED an identical
// request (same route, resolved model and canonical body) is answered from the cache with
// `X-Cache: HIT`, before rate limits and budgets and counting nothing; Cache-Control
// no-cache / no-store bypass it; only successful answers are stored, streams included.

const configYaml = `
pricing:
  mock-model: { input_per_mtok: 1, output_per_mtok: 1 }
virtual_models:
  - name: cached-alias
    targets:
      - { provider: openai, model: mock-model }
      - { provider: openai-b, model: mock-model }
`;

/** A chat body with a content of its own, so each test owns its cache entries. */
function body(content: string, extra: Record<string, unknown> = {}, model = 'openai/mock-model'): Record<string, unknown> {
  return { model, messages: [{ role: 'user', content }], ...extra };
}

describe('response cache in memory', () => {
  let mocks: MockUpstream[];
  let a: MockUpstream;
  let b: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: OpenAI;

  beforeAll(async () => {
    mocks = await startMocks(2);
    [a, b] = mocks as [MockUpstream, MockUpstream];
    database = await createGatewayDatabase('sqlite');
    const env = instancesEnv(mocks, ['mock-model', 'mock-model-2', 'error-500'], {
      RESPONSE_CACHE_ENABLED: 'true',
      SET_RATE_LIMIT_: 'rph=1000',
      SET_RATE_LIMIT_TIGHT: 'rph=1',
      SET_PROVIDER_RATE_LIMIT_OPENAI: 'rph=1000',
      SET_BUDGET_BROKE: JSON.stringify([{ period_seconds: 86_400, amount: 0.000001 }]),
    });
    gateway = await startGateway({ env, configYaml });
    storage = await database.open(gateway);
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await closeAll(mocks ?? []);
  });

  /** A chat request with the master key; a string payload is sent as is. */
  function send(payload: unknown, headers: Record<string, string> = {}): Promise<RawReply> {
    return rawRequest(`${gateway.url}/v1/chat/completions`, { body: payload, headers: { ...bearer(), ...headers } });
  }

  /** requests_used of every rule, by scope and subject. */
  async function counters(): Promise<Record<string, number>> {
    return Object.fromEntries((await rateLimitRules(gateway)).map((rule) => [`${rule.scope}:${rule.subject}`, rule.requests_used]));
  }

  it('a repeated identical request is a HIT: same body, no upstream call, no counter moved, no x-ratelimit headers', async () => {
    const payload = body('cache me');
    const first = await send(payload);
    expect(first.status, first.text).toBe(200);
    expect(isHit(first)).toBe(false);
    expect(rateLimitHeaderNames(first).length).toBeGreaterThan(0);
    expect(chatCount(a)).toBe(1);
    const before = await counters();
    expect(before['user_path:/']).toBe(1);
    expect(before['provider:openai']).toBe(1);

    const second = await send(payload);
    expect(second.status, second.text).toBe(200);
    expect(isHit(second)).toBe(true);
    expect(String(second.headers['content-type'])).toMatch(/^application\/json/);
    expect(second.text).toBe(first.text);
    expect(parseJson(second.text)['provider']).toBe('openai');
    expect(rateLimitHeaderNames(second)).toEqual([]);
    expect(chatCount(a)).toBe(1);
    expect(await counters()).toEqual(before);

    // Usage: the miss is charged, the hit is recorded with cache_hit and no cost.
    const missRecord = await usageRecordOf(storage, String(first.headers['x-request-id']));
    expect(missRecord).toMatchObject({ cacheHit: false, provider: 'openai', model: 'mock-model', status: 200 });
    expect(missRecord.costUsd).toBeGreaterThan(0);
    const hitRecord = await usageRecordOf(storage, String(second.headers['x-request-id']));
    expect(hitRecord).toMatchObject({ cacheHit: true, costUsd: 0, provider: 'openai', model: 'mock-model', status: 200 });
  });

  it('Cache-Control: no-cache goes to the upstream even when an entry exists', async () => {
    const payload = body('refresh me');
    expect(isHit(await send(payload))).toBe(false);
    expect(isHit(await send(payload))).toBe(true);
    const before = chatCount(a);
    const bypass = await send(payload, { 'cache-control': 'no-cache' });
    expect(bypass.status, bypass.text).toBe(200);
    expect(isHit(bypass)).toBe(false);
    expect(chatCount(a)).toBe(before + 1);
  });

  it('Cache-Control: no-store is neither answered from nor written to the cache', async () => {
    const payload = body('do not keep me');
    const before = chatCount(a);
    const stored = await send(payload, { 'cache-control': 'max-age=0, no-store' });
    expect(stored.status, stored.text).toBe(200);
    expect(isHit(stored)).toBe(false);
    expect(isHit(await send(payload))).toBe(false); // nothing was stored
    expect(chatCount(a)).toBe(before + 2);
    expect(isHit(await send(payload))).toBe(true);
    expect(chatCount(a)).toBe(before + 2);
  });

  it('a streamed answer is cached and replayed as SSE that the openai client reads', async () => {
    const params = { model: 'openai/mock-model', messages: [{ role: 'user' as const, content: 'stream me' }], stream: true as const };
    const read = async (): Promise<{ hit: boolean; content: string; ids: string[] }> => {
      const { data, response } = await client.chat.completions.create(params).withResponse();
      let content = '';
      const ids: string[] = [];
      for await (const chunk of data) {
        content += chunk.choices[0]?.delta.content ?? '';
        ids.push(chunk.id);
      }
      return { hit: response.headers.get('x-cache') === 'HIT', content, ids };
    };
    const first = await read();
    expect(first.hit).toBe(false);
    expect(chatCount(a)).toBeGreaterThan(0);
    const before = chatCount(a);
    await sleep(100); // the entry is stored once the relay has ended
    const second = await read();
    expect(second.hit).toBe(true);
    expect(second.content).toBe(first.content);
    expect(second.ids).toEqual(first.ids);
    expect(chatCount(a)).toBe(before);

    const raw = await send(params);
    expect(isHit(raw)).toBe(true);
    expect(String(raw.headers['content-type'])).toMatch(/^text\/event-stream/);
    expect(parseSse(raw.text).length).toBeGreaterThan(0);
    // The non-streaming form of the same request is a different entry.
    expect(isHit(await send({ ...params, stream: false }))).toBe(false);
  });

  it('an error answer is not cached', async () => {
    const payload = body('fail me', {}, 'openai/error-500');
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const reply = await send(payload);
      expectEnvelope(reply, { status: 500, type: 'provider_error', provider: 'openai' });
      expect(isHit(reply)).toBe(false);
    }
    expect(chatCount(a, 'error-500')).toBe(2);
  });

  it('a different body or model misses', async () => {
    const payload = body('vary me', { temperature: 0.2 });
    expect(isHit(await send(payload))).toBe(false);
    expect(isHit(await send(payload))).toBe(true);
    const before = chatCount(a);
    expect(isHit(await send({ ...payload, temperature: 0.3 }))).toBe(false);
    expect(isHit(await send(body('vary me too', { temperature: 0.2 })))).toBe(false);
    expect(isHit(await send({ ...payload, model: 'openai/mock-model-2' }))).toBe(false);
    expect(isHit(await send({ ...payload, model: 'openai-b/mock-model' }))).toBe(false);
    expect(chatCount(a)).toBe(before + 3);
    expect(chatCount(b, 'mock-model')).toBeGreaterThanOrEqual(1);
  });

  it('the order of keys in the JSON body does not matter', async () => {
    const first = await send('{"model":"openai/mock-model","messages":[{"role":"user","content":"order"}],"temperature":0.5}');
    expect(first.status, first.text).toBe(200);
    expect(isHit(first)).toBe(false);
    const before = chatCount(a);
    const reordered = await send('{"temperature":0.5,"messages":[{"content":"order","role":"user"}],"model":"openai/mock-model"}');
    expect(isHit(reordered)).toBe(true);
    expect(reordered.text).toBe(first.text);
    expect(chatCount(a)).toBe(before);
  });

  it('a virtual model is cached by its name, whichever target served', async () => {
    const payload = body('alias me', {}, 'cached-alias');
    const first = await send(payload);
    expect(first.status, first.text).toBe(200);
    const total = chatCount(a) + chatCount(b);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const reply = await send(payload);
      expect(isHit(reply)).toBe(true);
      expect(reply.text).toBe(first.text);
    }
    expect(chatCount(a) + chatCount(b)).toBe(total);
  });

  it('a hit is served on a path whose rate limit is exhausted, and the user path is part of the key', async () => {
    const payload = body(`tight ${randomUUID()}`);
    const headers = { 'x-user-path': '/tight' };
    expect(isHit(await send(payload, headers))).toBe(false); // the one request of the hour
    const hit = await send(payload, headers);
    expect(hit.status, hit.text).toBe(200);
    expect(isHit(hit)).toBe(true);
    // The default scope (user_path): another path has entries of its own.
    expect(isHit(await send(payload, { 'x-user-path': '/elsewhere' }))).toBe(false);
    const miss = await send(body('tight, but new'), headers);
    expectEnvelope(miss, { status: 429, type: 'rate_limit_error', provider: 'ratelimit', code: 'rate_limit_exceeded' });
    expect((await rateLimitRules(gateway)).find((rule) => rule.subject === '/tight')?.requests_used).toBe(1);
  });

  it('a hit is served on a path whose budget is spent', async () => {
    const payload = body('budget me');
    const headers = { 'x-user-path': '/broke' };
    expect(isHit(await send(payload, headers))).toBe(false); // costs more than the budget
    const before = chatCount(a);
    const hit = await send(payload, headers);
    expect(hit.status, hit.text).toBe(200);
    expect(isHit(hit)).toBe(true);
    const refused = await send(body('budget me again'), headers);
    expectEnvelope(refused, { status: 429, type: 'rate_limit_error', provider: 'budget', code: 'budget_exceeded' });
    expect(chatCount(a)).toBe(before);
  });
});
