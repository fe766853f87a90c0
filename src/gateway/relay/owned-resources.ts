import type { ErrorCode } from '../../errors/codes.ts';
import { invalidRequest, notFound } from '../../errors/gateway-error.ts';
import type { OwnedKind, OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import { listingScope, mayView, type Caller } from '../../ownership/visibility.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import { readBody, upstreamErrorOf } from '../../providers/upstream-body.ts';
import type { RequestContext } from '../request-context.ts';
import { resourcePath } from './resources.ts';

/** A collection of upstream resources that tenants own (files, batches, uploads). */
export interface OwnedCollection {
  readonly kind: OwnedKind;
  /** The upstream path segment: `files`, `batches`, `uploads`. */
  readonly path: string;
  readonly notFoundCode: ErrorCode;
  /** OpenAI's object name in its own not-found message. */
  readonly objectName: string;
  /** Headers every upstream call of it carries (`OpenAI-Beta: assistants=v2`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Gemini's native API (ForwardRequest.surface). */
  readonly surface?: 'native';
}

export const ownedFiles: OwnedCollection = { kind: 'file', path: 'files', notFoundCode: 'file_not_found', objectName: 'File' };
export const ownedBatches: OwnedCollection = { kind: 'batch', path: 'batches', notFoundCode: 'batch_not_found', objectName: 'Batch' };
export const ownedUploads: OwnedCollection = { kind: 'upload', path: 'uploads', notFoundCode: 'upload_not_found', objectName: 'Upload' };

/** Page size bounds of a tenant's listing (served from the owner store). */
const defaultLimit = 20;
const maximumLimit = 100;
/** Store pages read per listing at most, when upstream objects are gone or filtered out. */
const maximumRounds = 10;
/** Upstream reads in flight per listing. */
const fetchConcurrency = 8;

/**
 * The one answer for an id the caller may not see, whether it exists or not: the same status,
 * code and message for another tenant's id as for an unknown one (no existence oracle).
 */
export function notOwned(collection: OwnedCollection, id: string, param = 'id'): Error {
  return notFound(`No such ${collection.objectName} object: ${id}`, { code: collection.notFoundCode, param });
}

/** The owner row of `id` on `instance` when the caller may see it; else the not-found error. */
export async function assertVisible(
  store: OwnershipStore,
  caller: Caller,
  collection: OwnedCollection,
  instance: string,
  id: string,
  param = 'id',
): Promise<OwnedResource | null> {
  const owner = await store.find(collection.kind, instance, id);
  if (!mayView(caller, owner)) throw notOwned(collection, id, param);
  return owner;
}

/** The instances of one provider type, in configuration order. */
export function instancesOfType(catalog: ModelCatalog, type: string): ProviderAdapter[] {
  return [...catalog.instances.values()].map((listing) => listing.adapter).filter((adapter) => adapter.type === type);
}

/**
 * The instance of a call on a provider's own resources (Anthropic's, Gemini's), and the owner row
 * of the path's id: the `provider` hint (an instance of that type), else the instance that
 * recorded the id, else the first instance of the type. An id the caller may not see is the
 * not-found answer, hint or not; an unrecorded one is visible to those who see everything only.
 */
export async function chooseOwnedInstance(
  catalog: ModelCatalog,
  store: OwnershipStore,
  caller: Caller,
  call: { collection: OwnedCollection; type: string; hint: string | undefined; id?: string | undefined },
): Promise<{ adapter: ProviderAdapter; owner: OwnedResource | null }> {
  const { collection, type, hint, id } = call;
  const instances = instancesOfType(catalog, type);
  if (hint !== undefined) {
    const adapter = instances.find((candidate) => candidate.name === hint);
    if (adapter === undefined) {
      throw invalidRequest(`provider "${hint.slice(0, 256)}" is not a configured instance of type ${type}`, {
        code: 'unknown_provider',
        param: 'provider',
      });
    }
    if (id === undefined) return { adapter, owner: null };
    const owner = await store.find(collection.kind, adapter.name, id);
    if (!mayView(caller, owner)) throw notOwned(collection, id);
    return { adapter, owner };
  }
  const first = instances[0];
  if (first === undefined) {
    throw invalidRequest(`no configured provider instance is of type ${type}`, { code: 'unsupported_endpoint', param: 'provider' });
  }
  if (id === undefined) return { adapter: first, owner: null };
  for (const adapter of instances) {
    const owner = await store.find(collection.kind, adapter.name, id);
    if (owner === null) continue;
    if (!mayView(caller, owner)) throw notOwned(collection, id);
    return { adapter, owner };
  }
  if (!mayView(caller, null)) throw notOwned(collection, id);
  return { adapter: first, owner: null };
}

/**
 * How a listing pages, in its API's own words: the query parameters read (OpenAI's `limit` and
 * `after`, Anthropic's `limit` and `after_id`, Gemini's `pageSize` and `pageToken`) and the page
 * answered. The cursor is always the id of the caller's own last row.
 */
export interface Paging {
  readonly limitParameter: string;
  readonly afterParameter: string;
  /** Page size bounds (Anthropic and OpenAI: 1 to 100 here, default 20). */
  readonly defaultLimit?: number;
  page(data: Record<string, unknown>[], hasMore: boolean, cursor: string | null): Record<string, unknown>;
}

const idsOf = (data: Record<string, unknown>[]): (string | null)[] =>
  data.map((object) => (typeof object['id'] === 'string' ? object['id'] : null));

/** OpenAI's list object: `object`, `data`, `first_id`, `last_id`, `has_more`. */
export const openAIPaging: Paging = {
  limitParameter: 'limit',
  afterParameter: 'after',
  page: (data, hasMore) => {
    const ids = idsOf(data);
    return { object: 'list', data, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null, has_more: hasMore };
  },
};

/** Anthropic's page: `data`, `has_more`, `first_id`, `last_id`; `after_id` continues it. */
export const anthropicPaging: Paging = {
  limitParameter: 'limit',
  afterParameter: 'after_id',
  page: (data, hasMore) => {
    const ids = idsOf(data);
    return { data, has_more: hasMore, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null };
  },
};

/** Google's page: the objects under `key` (`files`, `cachedContents`) and `nextPageToken` while more follow. */
export function geminiPaging(key: string): Paging {
  return {
    limitParameter: 'pageSize',
    afterParameter: 'pageToken',
    defaultLimit: 10,
    page: (data, hasMore, cursor) => ({ [key]: data, ...(hasMore && cursor !== null ? { nextPageToken: cursor } : {}) }),
  };
}

export interface ListOptions {
  /** Keeps an object in the page (a query filter such as files' `purpose`); all when absent. */
  keep?: (object: Record<string, unknown>) => boolean;
  /** Called with each object read (a batch seen completed is charged; it may edit the object). */
  seen?: (object: Record<string, unknown>, owner: OwnedResource) => Promise<void>;
  /** The page's shape; OpenAI's when absent. */
  paging?: Paging;
}

/**
 * A tenant's listing, served from the owner store: the caller's resources on the instance,
 * newest first, each read from the upstream by id. The limit (1 to 100, default 20) and the
 * cursor page it; `has_more` says whether another of the caller's resources follows, so the
 * cursor is always one of the caller's own ids. Resources the upstream no longer has are left out.
 */
export async function listOwned(
  store: OwnershipStore,
  adapter: ProviderAdapter,
  context: RequestContext,
  collection: OwnedCollection,
  query: URLSearchParams,
  options: ListOptions = {},
): Promise<Record<string, unknown>> {
  const paging = options.paging ?? openAIPaging;
  const limit = pageLimit(query.get(paging.limitParameter), paging.defaultLimit ?? defaultLimit);
  const visibleTo = listingScope(context);
  const data: Record<string, unknown>[] = [];
  let after = query.get(paging.afterParameter) ?? undefined;
  let hasMore = true;
  for (let round = 0; round < maximumRounds && data.length < limit; round += 1) {
    const wanted = limit - data.length;
    const rows = await store.list({ kind: collection.kind, instance: adapter.name, visibleTo, after, limit: wanted + 1 });
    const taken = rows.slice(0, wanted);
    const objects = await mapBounded(taken, (row) => readOwned(adapter, context, collection, row.id));
    for (const [index, object] of objects.entries()) {
      const owner = taken[index] as OwnedResource;
      if (object === null) continue;
      await options.seen?.(object, owner);
      if (options.keep === undefined || options.keep(object)) data.push(object);
    }
    after = taken.at(-1)?.id ?? after;
    if (rows.length <= wanted) {
      hasMore = false;
      break;
    }
  }
  return paging.page(data, hasMore, after ?? null);
}

/** One object read from the upstream by id; null when the upstream no longer has it. */
export async function readOwned(
  adapter: ProviderAdapter,
  context: RequestContext,
  collection: OwnedCollection,
  id: string,
): Promise<Record<string, unknown> | null> {
  return readObject(adapter, context, resourcePath(collection.path, id), collection.headers, collection.surface);
}

/** One JSON object read from the upstream at `path`; null when the upstream does not have it. */
export async function readObject(
  adapter: ProviderAdapter,
  context: RequestContext,
  path: string,
  headers: Readonly<Record<string, string>> = {},
  surface?: OwnedCollection['surface'],
): Promise<Record<string, unknown> | null> {
  const response = await adapter.forward(
    { method: 'GET', path, headers: { ...headers }, body: null, ...(surface === undefined ? {} : { surface }) },
    { signal: context.signal, requestId: context.requestId },
  );
  if (response.statusCode === 404) {
    await response.body.dump();
    return null;
  }
  if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, adapter.name);
  return jsonObjectOf(await readBody(response, adapter.name, context.signal));
}

/** A JSON object, or null when the text is not one. */
export function jsonObjectOf(text: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function pageLimit(raw: string | null, fallback: number): number {
  const parsed = raw === null ? Number.NaN : Number.parseInt(raw, 10);
  if (!Number.isFinite(parsed)) return fallback;
  return Math.min(maximumLimit, Math.max(1, parsed));
}

async function mapBounded<Item, Result>(items: readonly Item[], map: (item: Item) => Promise<Result>): Promise<Result[]> {
  const results: Result[] = new Array<Result>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await map(items[index] as Item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(fetchConcurrency, items.length) }, worker));
  return results;
}
