import { modelAllowed, type VirtualModelNames } from '../../auth/allowlist.ts';
import { permissionError, providerError } from '../../errors/gateway-error.ts';
import type { OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import { mayView, type Caller } from '../../ownership/visibility.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { Metering } from '../../usage/metering.ts';
import type { RequestContext } from '../request-context.ts';
import { chooseOwnedInstance, instancesOfType, notOwned, type OwnedCollection } from './owned-resources.ts';

/** Gemini's Files API (`files/{id}`; the id is stored without `files/`). */
export const geminiFiles: OwnedCollection = {
  kind: 'file',
  path: 'files',
  notFoundCode: 'file_not_found',
  objectName: 'File',
  surface: 'native',
};

/** Gemini's cached contents (`cachedContents/{id}`; the id is stored without the prefix). */
export const geminiCachedContents: OwnedCollection = {
  kind: 'cached_content',
  path: 'cachedContents',
  notFoundCode: 'cached_content_not_found',
  objectName: 'CachedContent',
  surface: 'native',
};

/** A resumable upload session, by the upstream's `upload_id`. */
export const geminiUploads: OwnedCollection = {
  kind: 'upload',
  path: 'files',
  notFoundCode: 'upload_not_found',
  objectName: 'Upload',
};

/** `files/abc` or `abc` -> `abc` (a resource name's last part, as the owner store keys it). */
export function bareId(name: string, collection: string): string {
  return name.startsWith(`${collection}/`) ? name.slice(collection.length + 1) : name;
}

/** The instance of a Gemini resource call (`chooseOwnedInstance` with type `gemini`). */
export function chooseGeminiInstance(
  catalog: ModelCatalog,
  store: OwnershipStore,
  caller: Caller,
  collection: OwnedCollection,
  hint: string | undefined,
  id?: string,
): Promise<{ adapter: ProviderAdapter; owner: OwnedResource | null }> {
  return chooseOwnedInstance(catalog, store, caller, { collection, type: 'gemini', hint, id });
}

/** The `upload_id` of the upload URL an upstream answered a resumable start with. */
export function uploadIdOf(uploadUrl: string | undefined, provider: string): string {
  let id: string | null = null;
  try {
    id = uploadUrl === undefined ? null : new URL(uploadUrl).searchParams.get('upload_id');
  } catch {
    id = null;
  }
  if (id === null || id === '' || id.length > 1024) {
    throw providerError(`upstream ${provider} answered a resumable upload without a readable x-goog-upload-url`, {
      provider,
      code: 'invalid_upstream_response',
    });
  }
  return id;
}

/** The gateway's own upload URL for an upload session: the SDK sends the file's bytes there. */
export function gatewayUploadUrl(origin: string, uploadId: string): string {
  return `${origin}/upload/v1beta/files?upload_id=${encodeURIComponent(uploadId)}&upload_protocol=resumable`;
}

/** A cached content's model (`models/gemini-2.5-flash`) must pass the key's model allowlist on the instance. */
export function assertCacheModelAllowed(
  caller: Caller,
  instance: string,
  body: Record<string, unknown>,
  names: VirtualModelNames | null,
): void {
  const allowed = caller.principal.allowedModels;
  if (allowed === undefined || allowed === null) return;
  const named = body['model'];
  const model = typeof named === 'string' ? bareId(named, 'models') : undefined;
  if (model !== undefined && modelAllowed(allowed, { instance, model }, names)) return;
  const shown = model === undefined ? 'an unreadable model' : `${instance}/${model.slice(0, 256)}`;
  throw permissionError(`this credential may not use ${shown}`, { code: 'model_not_allowed', param: 'model' });
}

/**
 * The file ids a Gemini body names (`contents[].parts[].fileData.fileUri`, `.../files/{id}`), each
 * once; linear in the body.
 */
export function fileIdsOf(body: Record<string, unknown>): string[] {
  const ids = new Set<string>();
  const contents = Array.isArray(body['contents']) ? (body['contents'] as unknown[]) : [];
  const system = body['systemInstruction'];
  for (const content of [...contents, system]) {
    const parts = typeof content === 'object' && content !== null ? (content as { parts?: unknown }).parts : undefined;
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      const data = typeof part === 'object' && part !== null ? (part as { fileData?: unknown }).fileData : undefined;
      const uri = typeof data === 'object' && data !== null ? (data as { fileUri?: unknown }).fileUri : undefined;
      const id = typeof uri === 'string' ? /(?:^|\/)files\/([^/?#]+)/.exec(uri)?.[1] : undefined;
      if (id !== undefined) ids.add(id);
    }
  }
  return [...ids];
}

/**
 * Every id must be one the caller may see on a Gemini-type instance (one query per instance),
 * else the collection's not-found answer, before anything is sent upstream.
 */
export async function assertGeminiVisible(
  catalog: ModelCatalog,
  store: OwnershipStore,
  caller: Caller,
  collection: OwnedCollection,
  ids: readonly string[],
  param: string,
): Promise<void> {
  if (ids.length === 0 || mayView(caller, null)) return;
  const owners = new Map<string, OwnedResource>();
  for (const adapter of instancesOfType(catalog, 'gemini')) {
    for (const owner of await store.findMany(collection.kind, adapter.name, ids)) if (!owners.has(owner.id)) owners.set(owner.id, owner);
  }
  for (const id of ids) if (!mayView(caller, owners.get(id) ?? null)) throw notOwned(collection, id, param);
}

/**
 * The `cachedContent` a generateContent request names (`cachedContents/{id}`), which must be one
 * the caller may see: 404 `cached_content_not_found` otherwise, before the pipeline runs.
 */
export async function assertCachedContentVisible(
  catalog: ModelCatalog,
  store: OwnershipStore,
  caller: Caller,
  body: unknown,
): Promise<void> {
  const named = typeof body === 'object' && body !== null ? (body as { cachedContent?: unknown }).cachedContent : undefined;
  if (typeof named !== 'string') return;
  await assertGeminiVisible(catalog, store, caller, geminiCachedContents, [bareId(named, 'cachedContents')], 'cachedContent');
}

/**
 * A created cached content's usage: `usageMetadata.totalTokenCount` tokens stored, recorded for
 * its owner; the cost is null (the price table prices no cache storage). Nothing when the answer
 * reports no count.
 */
export function meterCachedContent(metering: Metering, context: RequestContext, provider: string, answer: Record<string, unknown>): void {
  const metadata = answer['usageMetadata'];
  const total = typeof metadata === 'object' && metadata !== null ? (metadata as { totalTokenCount?: unknown }).totalTokenCount : undefined;
  if (typeof total !== 'number' || !Number.isFinite(total) || total < 0) return;
  const model = typeof answer['model'] === 'string' ? bareId(answer['model'], 'models') : 'unknown';
  metering.report({
    context,
    endpoint: '/v1beta/cachedContents',
    provider,
    model,
    usage: { prompt_tokens: Math.floor(total), completion_tokens: 0, total_tokens: Math.floor(total) },
    status: 200,
    stream: false,
    costUsd: null,
  });
}
