import { describe, expect, it } from 'vitest';
import type { RequestLogEntry, RequestLogQuery, RequestLogStore } from '../request-log/request-log-store.ts';
import { baseTime, requestLogEntry as entry, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);

const withoutBodies = (value: RequestLogEntry): RequestLogEntry => ({ ...value, requestBody: null, responseBody: null });

async function ids(store: RequestLogStore, query: Partial<RequestLogQuery>): Promise<string[]> {
  const page = await store.list({ limit: 500, ...query });
  return page.entries.map((found) => found.id);
}

describe.each(backends)('RequestLogStore conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('round-trips full entries; a listing leaves the bodies out, find keeps them', async () => {
    const { requestLog } = fresh().storage;
    const full = entry({
      virtualModel: 'smart',
      attempts: [
        { provider: 'a', model: 'm1', status: 503, latencyMs: 3, errorCode: 'upstream_error' },
        { provider: 'b', model: 'm2', status: 200, latencyMs: 9.5, errorCode: null },
      ],
      rateLimit: { scope: 'user_path', subject: '/team', period: 'minute', kind: 'requests' },
      ttftMs: 4.5,
      costUsd: null,
      cacheHit: true,
      stream: true,
      userAgent: null,
      apiKeyId: null,
      requestBody: '{"model":"m","note":"ü ✓"}',
      responseBody: '{"ok":true}',
      guardrails: [
        { name: 'pii-redact', type: 'pii', action: 'redact', mode: 'enforce', stage: 'input' },
        { name: 'watch', type: 'deny_list', action: 'block', mode: 'monitor', stage: 'output' },
      ],
    });
    await requestLog.insertMany([full]);
    expect((await requestLog.list({ limit: 10 })).entries).toEqual([withoutBodies(full)]);
    expect(await requestLog.find(full.id)).toEqual(full);
    expect(await requestLog.find('unknown')).toBeNull();
  });

  it('find answers the newest entry of a repeated request id', async () => {
    const { requestLog } = fresh().storage;
    await requestLog.insertMany([entry({ id: 'same', status: 500 }), entry({ id: 'same', status: 200 })]);
    expect((await requestLog.find('same'))?.status).toBe(200);
  });

  it('finds and prefix-lists by request id whether the row is keyed by it (gateway ids) or not (an inbound X-Request-ID)', async () => {
    const { requestLog } = fresh().storage;
    // The gateway keys a row by the request id it made; an inbound id gets a row key of its own.
    const named = (id: string, overrides: Partial<RequestLogEntry> = {}): RequestLogEntry => ({ ...entry(overrides), id, rowId: id });
    await requestLog.insertMany([
      named('019a-own-1', { status: 500 }),
      entry({ id: '019a-own-1', status: 502 }),
      named('019a-own-2'),
      entry({ id: '019a-inbound' }),
      named('019b-own-3'),
      entry({ id: '019b-inbound', cacheHit: true }),
    ]);
    expect((await requestLog.find('019a-own-1'))?.status).toBe(502);
    expect((await requestLog.find('019a-own-2'))?.id).toBe('019a-own-2');
    expect((await requestLog.find('019b-inbound'))?.id).toBe('019b-inbound');
    expect(await requestLog.find('019a')).toBeNull();
    expect(await ids(requestLog, { text: '019a' })).toEqual(['019a-inbound', '019a-own-2', '019a-own-1', '019a-own-1']);
    expect(await ids(requestLog, { text: '019b-' })).toEqual(['019b-inbound', '019b-own-3']);
    expect(await ids(requestLog, { text: '019b', cacheHit: true })).toEqual(['019b-inbound']);
    expect(await ids(requestLog, { text: '019a-own-2', limit: 1 })).toEqual(['019a-own-2']);
  });

  it('lists a request id prefix that matches many rows (read in time order) like one that matches few (sorted)', async () => {
    const { requestLog } = fresh().storage;
    const named = (id: string, overrides: Partial<RequestLogEntry> = {}): RequestLogEntry => ({ ...entry(overrides), id, rowId: id });
    const many = Array.from({ length: 5_100 }, (_, index) => named(`p-${String(index).padStart(5, '0')}`, { cacheHit: index % 2 === 0 }));
    await requestLog.insertMany([...many, entry({ id: 'p-inbound' }), named('q-other'), entry({ id: 'p-inbound-hit', cacheHit: true })]);
    const first = await requestLog.list({ limit: 3, text: 'p-' });
    expect(first.entries.map((found) => found.id)).toEqual(['p-inbound-hit', 'p-inbound', 'p-05099']);
    const second = await requestLog.list({ limit: 2, text: 'p-', ...(first.next === null ? {} : { after: first.next }) });
    expect(second.entries.map((found) => found.id)).toEqual(['p-05098', 'p-05097']);
    expect(await ids(requestLog, { limit: 3, text: 'p-', cacheHit: true })).toEqual(['p-inbound-hit', 'p-05098', 'p-05096']);
    expect(await ids(requestLog, { text: 'p-0509' })).toEqual([
      'p-05099',
      'p-05098',
      'p-05097',
      'p-05096',
      'p-05095',
      'p-05094',
      'p-05093',
      'p-05092',
      'p-05091',
      'p-05090',
    ]);
    expect(await ids(requestLog, { text: 'q' })).toEqual(['q-other']);
  });

  it('insertMany is all or nothing', async () => {
    const { requestLog } = fresh().storage;
    const first = entry();
    await expect(requestLog.insertMany([entry({ id: 'batch' }), first, { ...first }])).rejects.toThrow();
    expect(await requestLog.find('batch')).toBeNull();
  });

  it('pages newest first with a keyset cursor, ties on time broken by row id, nothing lost or repeated', async () => {
    const { requestLog } = fresh().storage;
    // Three entries share each millisecond.
    const entries = Array.from({ length: 30 }, (_, index) => entry({ time: baseTime + Math.floor(index / 3), id: `page-${index}` }));
    await requestLog.insertMany(entries);
    const seen: string[] = [];
    let after: RequestLogQuery['after'];
    for (let page = 0; page < 10; page += 1) {
      const result = await requestLog.list({ limit: 7, ...(after === undefined ? {} : { after }) });
      seen.push(...result.entries.map((found) => found.id));
      if (result.next === null) break;
      after = result.next;
    }
    expect(seen).toEqual(entries.map((found) => found.id).reverse());
    const exact = await requestLog.list({ limit: 30 });
    expect(exact.next).toBeNull();
  });

  it('filters by time range, user path subtree, key, provider, model, endpoint, code, cache hit and request id prefix', async () => {
    const { requestLog } = fresh().storage;
    await requestLog.insertMany([
      entry({ id: 'early', time: baseTime - 10_000 }),
      entry({ id: 'team-sub', userPath: '/Team/App/Sub' }),
      entry({ id: 'team-alpha', userPath: '/team-alpha' }),
      entry({ id: 'key-2', apiKeyId: 'key-2' }),
      entry({ id: 'anthropic', provider: 'anthropic', model: 'claude' }),
      entry({ id: 'embed', endpoint: '/v1/embeddings' }),
      entry({ id: 'limited', status: 429, errorCode: 'rate_limit_exceeded', errorType: 'rate_limit_error' }),
      entry({ id: 'hit-ABC', cacheHit: true }),
    ]);
    expect(await ids(requestLog, { from: baseTime })).not.toContain('early');
    expect(await ids(requestLog, { to: baseTime })).toEqual(['early']);
    expect(await ids(requestLog, { userPath: '/team/app' })).toEqual(expect.arrayContaining(['team-sub', 'early']));
    expect(await ids(requestLog, { userPath: '/team/app' })).not.toContain('team-alpha');
    expect(await ids(requestLog, { userPath: '/TEAM/app/sub' })).toEqual(['team-sub']);
    expect(await ids(requestLog, { apiKeyId: 'key-2' })).toEqual(['key-2']);
    expect(await ids(requestLog, { provider: 'anthropic' })).toEqual(['anthropic']);
    expect(await ids(requestLog, { model: 'claude' })).toEqual(['anthropic']);
    expect(await ids(requestLog, { endpoint: '/v1/embeddings' })).toEqual(['embed']);
    expect(await ids(requestLog, { errorCode: 'rate_limit_exceeded' })).toEqual(['limited']);
    expect(await ids(requestLog, { cacheHit: true })).toEqual(['hit-ABC']);
    expect(await ids(requestLog, { text: 'hit-A' })).toEqual(['hit-ABC']);
    expect(await ids(requestLog, { text: 'team-' })).toEqual(['team-alpha', 'team-sub']);
    expect(await ids(requestLog, { text: 'ABC' })).toEqual([]);
    expect(await ids(requestLog, { provider: 'openai', cacheHit: false, from: baseTime })).toHaveLength(5);
  });

  it('combines filters: one drives the listing, the others still apply', async () => {
    const { requestLog } = fresh().storage;
    await requestLog.insertMany([
      entry({ id: 'a-429', status: 429, errorCode: 'rate_limit_exceeded', userPath: '/team/app/x', cacheHit: false }),
      entry({ id: 'b-429', status: 429, errorCode: 'rate_limit_exceeded', userPath: '/other', cacheHit: false }),
      entry({ id: 'a-502', status: 502, errorCode: 'upstream_error', userPath: '/team/app', cacheHit: true }),
      entry({ id: 'a-200', status: 200, userPath: '/team/app', cacheHit: true, apiKeyId: 'key-9' }),
    ]);
    const query = { status: { exact: 429 }, errorCode: 'rate_limit_exceeded', userPath: '/team/app' } as const;
    expect(await ids(requestLog, query)).toEqual(['a-429']);
    expect(await ids(requestLog, { status: { statusClass: 5 }, cacheHit: true, userPath: '/team/app' })).toEqual(['a-502']);
    expect(await ids(requestLog, { text: 'a-', cacheHit: true })).toEqual(['a-200', 'a-502']);
    expect(await ids(requestLog, { apiKeyId: 'key-9', cacheHit: false })).toEqual([]);
    expect(
      await ids(requestLog, { apiKeyId: 'key-1', provider: 'openai', model: 'gpt-4o-mini', endpoint: '/v1/chat/completions' }),
    ).toHaveLength(3);
  });

  it('lists a large user path subtree (read in time order) like a small one (sorted)', async () => {
    const { requestLog } = fresh().storage;
    const big = Array.from({ length: 5_100 }, (_, index) => entry({ id: `big-${index}`, userPath: `/big/p${index % 3}` }));
    await requestLog.insertMany([...big, entry({ id: 'big-root', userPath: '/BIG' }), entry({ id: 'bigger', userPath: '/bigger' })]);
    const first = await requestLog.list({ limit: 3, userPath: '/big' });
    expect(first.entries.map((found) => found.id)).toEqual(['big-root', 'big-5099', 'big-5098']);
    const second = await requestLog.list({ limit: 2, userPath: '/big', ...(first.next === null ? {} : { after: first.next }) });
    expect(second.entries.map((found) => found.id)).toEqual(['big-5097', 'big-5096']);
    expect((await requestLog.list({ limit: 2, userPath: '/big/p1' })).entries.map((found) => found.id)).toEqual(['big-5098', 'big-5095']);
  });

  it('filters by status and status class', async () => {
    const { requestLog } = fresh().storage;
    await requestLog.insertMany([
      entry({ id: 's200', status: 200 }),
      entry({ id: 's401', status: 401 }),
      entry({ id: 's429', status: 429 }),
      entry({ id: 's499', status: 499 }),
      entry({ id: 's502', status: 502 }),
      entry({ id: 's503', status: 503 }),
    ]);
    expect(await ids(requestLog, { status: { exact: 429 } })).toEqual(['s429']);
    expect(await ids(requestLog, { status: { statusClass: 4 } })).toEqual(['s499', 's429', 's401']);
    expect(await ids(requestLog, { status: { statusClass: 5 } })).toEqual(['s503', 's502']);
    expect(await ids(requestLog, { status: { exact: 200 } })).toEqual(['s200']);
  });

  it('filters on the common values that the partial indexes leave out (200, 2xx, no cache hit) like on any other', async () => {
    const { requestLog } = fresh().storage;
    await requestLog.insertMany([
      entry({ id: 'ok-hit', status: 200, cacheHit: true, userPath: '/team/app' }),
      entry({ id: 'ok-201', status: 201, endpoint: '/v1/embeddings', userPath: '/other' }),
      entry({ id: 'err', status: 502, errorCode: 'upstream_error', userPath: '/team/app' }),
      entry({ id: 'ok', status: 200, endpoint: '/v1/embeddings', userPath: '/team/app/x' }),
    ]);
    expect(await ids(requestLog, { status: { exact: 200 } })).toEqual(['ok', 'ok-hit']);
    expect(await ids(requestLog, { status: { statusClass: 2 }, endpoint: '/v1/embeddings' })).toEqual(['ok', 'ok-201']);
    expect(await ids(requestLog, { cacheHit: false, userPath: '/team/app' })).toEqual(['ok', 'err']);
    expect(await ids(requestLog, { status: { exact: 200 }, cacheHit: true })).toEqual(['ok-hit']);
    expect(await ids(requestLog, { status: { statusClass: 2 }, errorCode: 'upstream_error' })).toEqual([]);
  });

  it('a filtered listing pages with its cursor too', async () => {
    const { requestLog } = fresh().storage;
    await requestLog.insertMany(
      Array.from({ length: 12 }, (_, index) => entry({ id: `f-${index}`, provider: index % 2 === 0 ? 'even' : 'odd' })),
    );
    const first = await requestLog.list({ limit: 4, provider: 'even' });
    expect(first.entries.map((found) => found.id)).toEqual(['f-10', 'f-8', 'f-6', 'f-4']);
    const second = await requestLog.list({ limit: 4, provider: 'even', ...(first.next === null ? {} : { after: first.next }) });
    expect(second.entries.map((found) => found.id)).toEqual(['f-2', 'f-0']);
    expect(second.next).toBeNull();
  });

  it('deletes entries older than a time in bounded batches, oldest first', async () => {
    const { requestLog } = fresh().storage;
    const old = Array.from({ length: 25 }, (_, index) => entry({ id: `old-${index}`, time: baseTime + index }));
    const recent = Array.from({ length: 5 }, (_, index) => entry({ id: `new-${index}`, time: baseTime + 1_000 + index }));
    await requestLog.insertMany([...recent, ...old]);
    expect(await requestLog.deleteOlderThan(baseTime + 1_000, 10)).toBe(10);
    expect(await requestLog.find('old-9')).toBeNull();
    expect(await requestLog.find('old-10')).not.toBeNull();
    expect(await requestLog.deleteOlderThan(baseTime + 1_000, 10)).toBe(10);
    expect(await requestLog.deleteOlderThan(baseTime + 1_000, 10)).toBe(5);
    expect(await requestLog.deleteOlderThan(baseTime + 1_000, 10)).toBe(0);
    expect(await ids(requestLog, {})).toEqual(['new-4', 'new-3', 'new-2', 'new-1', 'new-0']);
  });
  it('stats: count, errors and nearest-rank p50/p95 latency per provider or model, optionally per bucket', async () => {
    const { requestLog } = fresh().storage;
    const latencies = Array.from({ length: 20 }, (_, index) => index + 1);
    await requestLog.insertMany([
      ...latencies.map((latency) => entry({ provider: 'a', model: 'm1', latencyMs: latency, status: latency > 18 ? 502 : 200 })),
      entry({ provider: 'b', model: 'm1', latencyMs: 7, status: 429, time: baseTime + 3_600_000 }),
      entry({ provider: null, model: null, latencyMs: 1, status: 401 }),
      entry({ provider: 'a', latencyMs: 999, time: baseTime - 1 }),
    ]);
    const range = { from: baseTime, to: baseTime + 86_400_000, maxRows: 1_000 };
    const byProvider = await requestLog.stats({ ...range, groupBy: 'provider' });
    expect(byProvider.rows).toBe(22);
    expect(byProvider.oldest).toBeGreaterThanOrEqual(baseTime);
    const groups = Object.fromEntries(byProvider.groups.map((group) => [String(group.key), group]));
    expect(groups['a']).toEqual({ key: 'a', requests: 20, errors: 2, serverErrors: 2, p50LatencyMs: 10, p95LatencyMs: 19 });
    expect(groups['b']).toEqual({ key: 'b', requests: 1, errors: 1, serverErrors: 0, p50LatencyMs: 7, p95LatencyMs: 7 });
    expect(groups['null']?.key).toBeNull();
    const byModel = await requestLog.stats({ ...range, groupBy: 'model', bucket: 'hour' });
    expect(byModel.groups.map((group) => [group.bucket, group.key, group.requests])).toEqual([
      [baseTime, 'm1', 20],
      [baseTime, null, 1],
      [baseTime + 3_600_000, 'm1', 1],
    ]);
    const bounded = await requestLog.stats({ ...range, groupBy: 'provider', maxRows: 5 });
    expect(bounded.rows).toBe(5);
    expect(bounded.groups.map((group) => [group.key, group.requests])).toEqual([
      ['a', 3],
      ['b', 1],
      [null, 1],
    ]);
  });

  it('keyActivity: requests, last use and cost per key from a time on; cost null when an entry with tokens is unpriced', async () => {
    const { requestLog } = fresh().storage;
    await requestLog.insertMany([
      entry({ apiKeyId: 'priced', costUsd: 0.25, time: baseTime + 10 }),
      entry({ apiKeyId: 'priced', costUsd: 0.5, time: baseTime + 20 }),
      // A refusal carries no tokens and no cost: it is counted, not unpriced.
      entry({ apiKeyId: 'priced', costUsd: null, totalTokens: 0, status: 429, time: baseTime + 30 }),
      entry({ apiKeyId: 'priced', costUsd: 4, time: baseTime - 1 }),
      entry({ apiKeyId: 'unpriced', costUsd: 0.1, time: baseTime + 5 }),
      entry({ apiKeyId: 'unpriced', costUsd: null, totalTokens: 15, time: baseTime + 6 }),
      entry({ apiKeyId: null, time: baseTime + 7 }),
    ]);
    expect(await requestLog.keyActivity(baseTime)).toEqual([
      { apiKeyId: 'priced', requests: 3, lastUsedAt: baseTime + 30, costUsd: 0.75 },
      { apiKeyId: 'unpriced', requests: 2, lastUsedAt: baseTime + 6, costUsd: null },
    ]);
    expect(await requestLog.keyActivity(baseTime + 1_000)).toEqual([]);
  });
});
