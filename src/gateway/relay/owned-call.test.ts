import { describe, expect, it } from 'vitest';
import type { OwnedKind, OwnedResource } from '../../ownership/ownership-store.ts';
import type { Caller } from '../../ownership/visibility.ts';
import { responsesReferences } from './openai-resources.ts';
import { assertReferencesVisible, matchCatalogue, type OwnerLookup } from './owned-call.ts';

const tenant = (userPath: string): Caller => ({ userPath, principal: { kind: 'api_key', keyId: 'k', boundUserPath: userPath } });

/** An owner store of fixed rows that counts its reads. */
function lookup(rows: readonly OwnedResource[]): OwnerLookup & { reads: number } {
  const of = (kind: OwnedKind, instance: string, id: string) =>
    rows.find((row) => row.kind === kind && row.instance === instance && row.id === id) ?? null;
  const store = {
    reads: 0,
    find: (kind: OwnedKind, instance: string, id: string) => {
      store.reads += 1;
      return Promise.resolve(of(kind, instance, id));
    },
    findMany: (kind: OwnedKind, instance: string, ids: readonly string[]) => {
      store.reads += 1;
      return Promise.resolve(ids.flatMap((id) => of(kind, instance, id) ?? []));
    },
  };
  return store;
}

const row = (kind: OwnedKind, id: string, userPath: string): OwnedResource => ({
  kind,
  id,
  instance: 'openai',
  userPath,
  keyId: 'k',
  createdAt: 0,
  charged: false,
});

describe('matchCatalogue', () => {
  it('matches a path to its route and parameters, a static segment before an id', () => {
    expect(matchCatalogue('GET', ['vector_stores', 'vs_1', 'files', 'file-1'])).toMatchObject({
      route: { path: '/v1/vector_stores/:vector_store_id/files/:file_id' },
      params: { vector_store_id: 'vs_1', file_id: 'file-1' },
    });
    expect(matchCatalogue('GET', ['videos', 'characters', 'content'])?.route.path).toBe('/v1/videos/characters/:character_id');
    expect(matchCatalogue('GET', ['videos', 'video_1', 'content'])?.route.path).toBe('/v1/videos/:video_id/content');
    expect(matchCatalogue('DELETE', ['models', 'ft:gpt-4o:org', 'x'])?.params).toEqual({ '*': 'ft:gpt-4o:org/x' });
    expect(matchCatalogue('POST', ['Conversations'])?.route.path).toBe('/v1/conversations');
    expect(matchCatalogue('GET', ['threads'])).toBeNull();
    expect(matchCatalogue('GET', ['assistants', 'asst_1', 'extra'])).toBeNull();
  });
});

describe('assertReferencesVisible', () => {
  const rows = [row('vector_store', 'vs_a', '/a'), row('file', 'file-a', '/a'), row('container', 'cntr_b', '/b')];

  it('refuses an id of another tenant like an unknown one, and reads each kind once', async () => {
    const store = lookup(rows);
    const body = {
      tools: [
        { type: 'file_search', vector_store_ids: ['vs_a', 'vs_a'] },
        { type: 'code_interpreter', container: { type: 'auto', file_ids: ['file-a'] } },
      ],
      input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-a' }] }],
    };
    await assertReferencesVisible(store, tenant('/a'), 'openai', responsesReferences, body);
    expect(store.reads).toBe(2);
    const foreign = { tools: [{ type: 'code_interpreter', container: 'cntr_b' }] };
    await expect(assertReferencesVisible(store, tenant('/a'), 'openai', responsesReferences, foreign)).rejects.toMatchObject({
      code: 'container_not_found',
    });
    await expect(assertReferencesVisible(store, tenant('/b'), 'openai', responsesReferences, foreign)).resolves.toBeUndefined();
    // The same id on another instance is another resource.
    await expect(assertReferencesVisible(store, tenant('/b'), 'other', responsesReferences, foreign)).rejects.toMatchObject({
      code: 'container_not_found',
    });
  });

  it('refuses a body naming more than 1000 ids without reading the store', async () => {
    const store = lookup(rows);
    const body = { tools: [{ type: 'file_search', vector_store_ids: Array.from({ length: 1001 }, (_, index) => `vs_${index}`) }] };
    await expect(assertReferencesVisible(store, tenant('/a'), 'openai', responsesReferences, body)).rejects.toMatchObject({
      code: 'vector_store_not_found',
    });
    expect(store.reads).toBe(0);
  });
});
