import { describe, expect, it } from 'vitest';
import type { OwnedResource } from '../ownership/ownership-store.ts';
import { baseTime, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);

function owned(id: string, overrides: Partial<OwnedResource> = {}): OwnedResource {
  return { kind: 'file', id, instance: 'openai', userPath: '/Team/A', keyId: 'key-a', createdAt: baseTime, charged: false, ...overrides };
}

describe.each(backends)('OwnershipStore conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('finds a recorded resource by kind, instance and id, exactly as recorded', async () => {
    const { ownership } = fresh().storage;
    const file = owned('file-1', { userPath: '/Team/A/é ✓' });
    await ownership.record(file);
    expect(await ownership.find('file', 'openai', 'file-1')).toEqual(file);
    expect(await ownership.find('batch', 'openai', 'file-1')).toBeNull();
    expect(await ownership.find('file', 'other', 'file-1')).toBeNull();
    expect(await ownership.find('file', 'openai', 'file-2')).toBeNull();
  });

  it('keeps the first owner of an id: a second record changes nothing', async () => {
    const { ownership } = fresh().storage;
    await ownership.record(owned('file-1'));
    await ownership.record(owned('file-1', { userPath: '/team/b', keyId: 'key-b', createdAt: baseTime + 5 }));
    expect(await ownership.find('file', 'openai', 'file-1')).toEqual(owned('file-1'));
  });

  it('keeps the same id apart per instance and per kind', async () => {
    const { ownership } = fresh().storage;
    await ownership.recordMany([
      owned('x-1'),
      owned('x-1', { instance: 'backup', userPath: '/team/b' }),
      owned('x-1', { kind: 'batch', userPath: '/team/c' }),
    ]);
    expect((await ownership.find('file', 'backup', 'x-1'))?.userPath).toBe('/team/b');
    expect((await ownership.find('batch', 'openai', 'x-1'))?.userPath).toBe('/team/c');
    expect((await ownership.find('file', 'openai', 'x-1'))?.userPath).toBe('/Team/A');
  });

  it('finds many ids at once, leaving unknown ones out', async () => {
    const { ownership } = fresh().storage;
    await ownership.recordMany([owned('a'), owned('b'), owned('c', { kind: 'response_item' })]);
    const ids = (await ownership.findMany('file', 'openai', ['a', 'b', 'c', 'zzz'])).map((resource) => resource.id);
    expect(ids.sort()).toEqual(['a', 'b']);
    expect(await ownership.findMany('file', 'openai', [])).toEqual([]);
  });

  it('lists newest first, only the subtree asked for (case-insensitive, no sibling prefix), paged after an id', async () => {
    const { ownership } = fresh().storage;
    await ownership.recordMany([
      owned('f1', { createdAt: baseTime + 1 }),
      owned('f2', { createdAt: baseTime + 2, userPath: '/team/a/app' }),
      owned('f3', { createdAt: baseTime + 2 }),
      owned('f4', { createdAt: baseTime + 3, userPath: '/team/b' }),
      owned('f5', { createdAt: baseTime + 4, userPath: '/team/ab' }),
      owned('f6', { createdAt: baseTime + 5, instance: 'backup' }),
      owned('f7', { createdAt: baseTime + 6, kind: 'batch' }),
    ]);
    const ids = async (visibleTo: string | null, after?: string, limit = 10): Promise<string[]> =>
      (await ownership.list({ kind: 'file', instance: 'openai', visibleTo, after, limit })).map((resource) => resource.id);
    expect(await ids('/team/a')).toEqual(['f3', 'f2', 'f1']);
    expect(await ids('/TEAM/A/')).toEqual(['f3', 'f2', 'f1']);
    expect(await ids('/team/a/app')).toEqual(['f2']);
    expect(await ids('/team')).toEqual(['f5', 'f4', 'f3', 'f2', 'f1']);
    expect(await ids('/')).toEqual(['f5', 'f4', 'f3', 'f2', 'f1']);
    expect(await ids(null)).toEqual(['f5', 'f4', 'f3', 'f2', 'f1']);
    expect(await ids('/team/a', undefined, 1)).toEqual(['f3']);
    expect(await ids('/team/a', 'f3', 1)).toEqual(['f2']);
    expect(await ids('/team/a', 'f2', 5)).toEqual(['f1']);
    expect(await ids('/team/a', 'f1', 5)).toEqual([]);
    expect(await ids('/team/a', 'unknown', 5)).toEqual([]);
  });

  it('marks a resource charged exactly once', async () => {
    const { ownership } = fresh().storage;
    await ownership.record(owned('batch_1', { kind: 'batch' }));
    expect(
      await Promise.all([ownership.markCharged('batch', 'openai', 'batch_1'), ownership.markCharged('batch', 'openai', 'batch_1')]),
    ).toEqual(expect.arrayContaining([true, false]));
    expect(await ownership.markCharged('batch', 'openai', 'batch_1')).toBe(false);
    expect(await ownership.markCharged('batch', 'openai', 'batch_unknown')).toBe(false);
    expect((await ownership.find('batch', 'openai', 'batch_1'))?.charged).toBe(true);
  });

  it('forgets a deleted resource; a second delete finds nothing', async () => {
    const { ownership } = fresh().storage;
    await ownership.recordMany([owned('f1'), owned('f2')]);
    expect(await ownership.delete('file', 'openai', 'f1')).toBe(true);
    expect(await ownership.delete('file', 'openai', 'f1')).toBe(false);
    expect(await ownership.find('file', 'openai', 'f1')).toBeNull();
    expect(await ownership.find('file', 'openai', 'f2')).not.toBeNull();
  });
});
