import { describe, expect, it } from 'vitest';
import type { UsageQuery } from '../usage/usage-store.ts';
import { baseTime, usageRecord, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);
const day = 86_400_000;
const everything: UsageQuery = { from: 0, to: baseTime + 365 * day };

describe.each(backends)('UsageStore conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('round-trips full records through insertMany and findByRequestId, oldest first', async () => {
    const { usage } = fresh().storage;
    const later = usageRecord({ requestId: 'shared', timestamp: baseTime + 2_000, cacheHit: true, stream: true, latencyMs: 12.75 });
    const earlier = usageRecord({
      requestId: 'shared',
      timestamp: baseTime + 1_000,
      apiKeyId: null,
      usage: { prompt_tokens: 7, prompt_tokens_details: { cached_tokens: 3 }, note: 'ü ✓ "quoted"' },
      costUsd: null,
      status: 499,
    });
    const other = usageRecord({ requestId: 'other', usage: null });
    await usage.insertMany([later, earlier, other]);
    expect(await usage.findByRequestId('shared')).toEqual([earlier, later]);
    expect(await usage.findByRequestId('other')).toEqual([other]);
    expect(await usage.findByRequestId('unknown')).toEqual([]);
  });

  it('keeps large epoch-millisecond timestamps exact', async () => {
    const { usage } = fresh().storage;
    const record = usageRecord({ timestamp: 4_102_444_800_123 });
    await usage.insertMany([record]);
    expect((await usage.findByRequestId(record.requestId))[0]?.timestamp).toBe(4_102_444_800_123);
  });

  it('insertMany of nothing is a no-op', async () => {
    const { usage } = fresh().storage;
    await usage.insertMany([]);
    expect(await usage.totals(everything)).toEqual({
      requests: 0,
      promptTokens: 0,
      completionTokens: 0,
      totalTokens: 0,
      costUsd: 0,
      unpricedRequests: 0,
    });
  });

  it('insertMany is all or nothing', async () => {
    const { usage } = fresh().storage;
    const first = usageRecord();
    await expect(usage.insertMany([usageRecord({ requestId: 'batch' }), first, { ...first }])).rejects.toThrow();
    expect(await usage.findByRequestId('batch')).toEqual([]);
    expect((await usage.totals(everything)).requests).toBe(0);
  });

  it('writes 2,000 records in one insertMany', async () => {
    const { usage } = fresh().storage;
    const records = Array.from({ length: 2_000 }, (_, index) =>
      usageRecord({ requestId: `bulk-${index % 10}`, timestamp: baseTime + index, costUsd: index % 2 === 0 ? 0.5 : null }),
    );
    await usage.insertMany(records);
    expect(await usage.totals(everything)).toEqual({
      requests: 2_000,
      promptTokens: 20_000,
      completionTokens: 10_000,
      totalTokens: 30_000,
      costUsd: 500,
      unpricedRequests: 1_000,
    });
    const bulk = await usage.findByRequestId('bulk-3');
    expect(bulk).toHaveLength(200);
    expect(bulk).toEqual(records.filter((record) => record.requestId === 'bulk-3'));
  });

  it('summarizes by user path (lower-cased), provider and model, ordered by key', async () => {
    const { usage } = fresh().storage;
    await usage.insertMany([
      usageRecord({ userPath: '/Team/App', provider: 'openai', model: 'gpt-4o', costUsd: 0.25 }),
      usageRecord({
        userPath: '/team/app',
        provider: 'anthropic',
        model: 'claude',
        costUsd: 0.5,
        promptTokens: 1,
        completionTokens: 2,
        totalTokens: 3,
      }),
      usageRecord({ userPath: '/alpha', provider: 'openai', model: 'Zeta', costUsd: null }),
    ]);
    expect(await usage.summarize(everything, 'user_path')).toEqual([
      { key: '/alpha', requests: 1, promptTokens: 10, completionTokens: 5, totalTokens: 15, costUsd: 0, unpricedRequests: 1 },
      { key: '/team/app', requests: 2, promptTokens: 11, completionTokens: 7, totalTokens: 18, costUsd: 0.75, unpricedRequests: 0 },
    ]);
    expect((await usage.summarize(everything, 'provider')).map(({ key, requests }) => [key, requests])).toEqual([
      ['anthropic', 1],
      ['openai', 2],
    ]);
    // Byte order, as in SQLite: upper case sorts before lower case.
    expect((await usage.summarize(everything, 'model')).map(({ key }) => key)).toEqual(['Zeta', 'claude', 'gpt-4o']);
  });

  it('summarizes by API key, requests without one under the empty key', async () => {
    const { usage } = fresh().storage;
    await usage.insertMany([
      usageRecord({ apiKeyId: 'key-b', costUsd: 0.5 }),
      usageRecord({ apiKeyId: 'key-a', costUsd: 0.25 }),
      usageRecord({ apiKeyId: 'key-b', costUsd: 0.5 }),
      usageRecord({ apiKeyId: null, costUsd: 1 }),
    ]);
    const rows = await usage.summarize(everything, 'api_key');
    expect(rows.map((row) => [row.key, row.requests, row.costUsd])).toEqual([
      ['', 1, 1],
      ['key-a', 1, 0.25],
      ['key-b', 2, 1],
    ]);
  });

  it('summarizes by UTC day', async () => {
    const { usage } = fresh().storage;
    await usage.insertMany([
      usageRecord({ timestamp: baseTime - 1 }),
      usageRecord({ timestamp: baseTime }),
      usageRecord({ timestamp: baseTime + day - 1 }),
      usageRecord({ timestamp: baseTime + 40 * day + 5 }),
    ]);
    expect((await usage.summarize(everything, 'day')).map(({ key, requests }) => [key, requests])).toEqual([
      ['2025-12-31', 1],
      ['2026-01-01', 2],
      ['2026-02-10', 1],
    ]);
  });

  it('summarizes a series by hour or day bucket and dimension, ordered by bucket then key', async () => {
    const { usage } = fresh().storage;
    const hour = 3_600_000;
    await usage.insertMany([
      usageRecord({ timestamp: baseTime + 5, provider: 'openai', costUsd: 0.25 }),
      usageRecord({ timestamp: baseTime + hour - 1, provider: 'azure' }),
      usageRecord({ timestamp: baseTime + hour - 2, provider: 'openai', costUsd: 0.5 }),
      usageRecord({ timestamp: baseTime + hour, provider: 'openai' }),
      usageRecord({ timestamp: baseTime + 26 * hour, provider: 'openai' }),
    ]);
    const series = (rows: Awaited<ReturnType<typeof usage.summarize>>) =>
      rows.map(({ bucket, key, requests, costUsd }) => [new Date(bucket ?? 0).toISOString(), key, requests, costUsd]);
    expect(series(await usage.summarize(everything, 'provider', 'hour'))).toEqual([
      ['2026-01-01T00:00:00.000Z', 'azure', 1, 0.001],
      ['2026-01-01T00:00:00.000Z', 'openai', 2, 0.75],
      ['2026-01-01T01:00:00.000Z', 'openai', 1, 0.001],
      ['2026-01-02T02:00:00.000Z', 'openai', 1, 0.001],
    ]);
    expect(series(await usage.summarize(everything, 'provider', 'day'))).toEqual([
      ['2026-01-01T00:00:00.000Z', 'azure', 1, 0.001],
      ['2026-01-01T00:00:00.000Z', 'openai', 3, 0.751],
      ['2026-01-02T00:00:00.000Z', 'openai', 1, 0.001],
    ]);
    // Without a bucket the rows carry none.
    expect((await usage.summarize(everything, 'provider'))[0]).not.toHaveProperty('bucket');
  });

  it('bounds time with from inclusive and to exclusive', async () => {
    const { usage } = fresh().storage;
    await usage.insertMany([baseTime - 1, baseTime, baseTime + 999, baseTime + 1_000].map((timestamp) => usageRecord({ timestamp })));
    const window = { from: baseTime, to: baseTime + 1_000 };
    expect((await usage.totals(window)).requests).toBe(2);
    expect((await usage.summarize(window, 'day')).map(({ requests }) => requests)).toEqual([2]);
    expect(await usage.summarize({ from: baseTime + 5_000, to: baseTime + 6_000 }, 'provider')).toEqual([]);
  });

  it('filters by provider and model', async () => {
    const { usage } = fresh().storage;
    await usage.insertMany([
      usageRecord({ provider: 'openai', model: 'a' }),
      usageRecord({ provider: 'openai', model: 'b' }),
      usageRecord({ provider: 'azure', model: 'a' }),
    ]);
    expect((await usage.totals({ ...everything, provider: 'openai' })).requests).toBe(2);
    expect((await usage.totals({ ...everything, model: 'a' })).requests).toBe(2);
    expect((await usage.totals({ ...everything, provider: 'openai', model: 'a' })).requests).toBe(1);
    expect(await usage.summarize({ ...everything, provider: 'azure' }, 'model')).toEqual([
      { key: 'a', requests: 1, promptTokens: 10, completionTokens: 5, totalTokens: 15, costUsd: 0.001, unpricedRequests: 0 },
    ]);
  });

  it('matches a user path subtree case-insensitively, not siblings sharing a prefix', async () => {
    const { usage } = fresh().storage;
    const paths = [
      '/team',
      '/Team/App',
      '/team/app/deep',
      '/team-alpha',
      '/team0',
      '/teams',
      '/other',
      '/a_b',
      '/axb',
      '/a_b/c',
      '/100%',
      '/1000',
      '/100%/x',
    ];
    await usage.insertMany(paths.map((userPath) => usageRecord({ userPath })));
    const keysUnder = async (userPath: string): Promise<string[]> =>
      (await usage.summarize({ ...everything, userPath }, 'user_path')).map(({ key }) => key);
    expect(await keysUnder('/team')).toEqual(['/team', '/team/app', '/team/app/deep']);
    expect(await keysUnder('/TEAM/app')).toEqual(['/team/app', '/team/app/deep']);
    expect(await keysUnder('/team-alpha')).toEqual(['/team-alpha']);
    expect(await keysUnder('/a_b')).toEqual(['/a_b', '/a_b/c']);
    expect(await keysUnder('/100%')).toEqual(['/100%', '/100%/x']);
    expect(await keysUnder('/nobody')).toEqual([]);
    expect(await keysUnder('/')).toHaveLength(paths.length);
    expect((await usage.totals({ ...everything, userPath: '/' })).requests).toBe(paths.length);
    expect((await usage.totals({ ...everything, userPath: '/team' })).requests).toBe(3);
  });

  it('counts unknown (NULL) costs as zero in sums, and counts them apart', async () => {
    const { usage } = fresh().storage;
    await usage.insertMany([
      usageRecord({ costUsd: null }),
      usageRecord({ costUsd: null, provider: 'x' }),
      usageRecord({ costUsd: 1.5, provider: 'x' }),
    ]);
    expect(await usage.totals(everything)).toMatchObject({ costUsd: 1.5, unpricedRequests: 2 });
    expect(
      (await usage.summarize(everything, 'provider')).map(({ key, costUsd, unpricedRequests }) => [key, costUsd, unpricedRequests]),
    ).toEqual([
      ['openai', 0, 1],
      ['x', 1.5, 1],
    ]);
    const series = await usage.summarize(everything, 'provider', 'hour');
    expect(series.map(({ key, unpricedRequests }) => [key, unpricedRequests])).toEqual([
      ['openai', 1],
      ['x', 1],
    ]);
  });
});
