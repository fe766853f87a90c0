import { modelAllowed, type VirtualModelNames } from '../../auth/allowlist.ts';
import { meteredUsage } from '../../dialects/anthropic-messages/usage.ts';
import { invalidRequest, permissionError } from '../../errors/gateway-error.ts';
import type { OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import { mayView, type Caller } from '../../ownership/visibility.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import { readBody, upstreamErrorOf } from '../../providers/upstream-body.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { RequestContext } from '../request-context.ts';
import { addNumbers, chargeBatchOnce, type BatchChargeDependencies } from './batch-charge.ts';
import { forEachJsonLine } from './batch-files.ts';
import { chooseOwnedInstance, instancesOfType, notOwned, type OwnedCollection } from './owned-resources.ts';
import { resourcePath } from './resources.ts';

/** The beta the Anthropic SDK names for its Files API (`anthropic-beta: files-api-2025-04-14`). */
export const anthropicFilesBeta = 'files-api-2025-04-14';

export const ownedMessageBatches: OwnedCollection = {
  kind: 'message_batch',
  path: 'messages/batches',
  notFoundCode: 'message_batch_not_found',
  objectName: 'MessageBatch',
};

export const ownedAnthropicFiles: OwnedCollection = {
  kind: 'file',
  path: 'files',
  notFoundCode: 'file_not_found',
  objectName: 'File',
  headers: { 'anthropic-beta': anthropicFilesBeta },
};

/** The Anthropic-type instances, in configuration order. */
function anthropicInstances(catalog: ModelCatalog): ProviderAdapter[] {
  return instancesOfType(catalog, 'anthropic');
}

/**
 * The instance of an Anthropic resource call, and the owner row of the path's id: the `provider`
 * hint (an Anthropic-type instance), else the instance that recorded the id, else the first
 * Anthropic-type instance (`chooseOwnedInstance`).
 */
export function chooseAnthropicInstance(
  catalog: ModelCatalog,
  store: OwnershipStore,
  caller: Caller,
  collection: OwnedCollection,
  hint: string | undefined,
  id?: string,
): Promise<{ adapter: ProviderAdapter; owner: OwnedResource | null }> {
  return chooseOwnedInstance(catalog, store, caller, { collection, type: 'anthropic', hint, id });
}

/**
 * Every `requests[].params.model` of a batch must pass the key's model allowlist on the instance;
 * a request whose model cannot be read is refused too (fail closed). Linear in the body.
 */
export function assertMessageBatchModelsAllowed(
  caller: Caller,
  instance: string,
  body: Record<string, unknown>,
  virtualModels: VirtualModelNames | null,
): void {
  const allowed = caller.principal.allowedModels;
  if (allowed === undefined || allowed === null) return;
  const requests = body['requests'];
  if (!Array.isArray(requests))
    throw invalidRequest('requests must be a list of batch requests', { code: 'invalid_body', param: 'requests' });
  for (const [index, item] of requests.entries()) {
    const params = typeof item === 'object' && item !== null ? (item as { params?: unknown }).params : undefined;
    const model = typeof params === 'object' && params !== null ? (params as { model?: unknown }).model : undefined;
    if (typeof model === 'string' && modelAllowed(allowed, { instance, model }, virtualModels)) continue;
    const named = typeof model === 'string' ? `${instance}/${model.slice(0, 256)}` : 'an unreadable model';
    throw permissionError(`this credential may not use ${named} (requests.${index}.params.model)`, {
      code: 'model_not_allowed',
      param: `requests.${index}.params.model`,
    });
  }
}

/**
 * A batch as the gateway answers it: its `results_url` (the upstream's own address, which the SDK
 * calls as it is) pointed at the gateway's `/v1/messages/batches/{id}/results`, so that results
 * are read through the gateway with the caller's key and ownership.
 */
export function withGatewayResultsUrl(batch: Record<string, unknown>, origin: string): Record<string, unknown> {
  const id = batch['id'];
  if (typeof batch['results_url'] !== 'string' || typeof id !== 'string') return batch;
  return { ...batch, results_url: `${origin}/v1/messages/batches/${encodeURIComponent(id)}/results` };
}

/**
 * What the gateway does with a message batch it reads: an `ended` batch is charged once to its
 * owner from its results' usage, per answering model, at the pricing table's price (the
 * `charged` flag is set first, so concurrent readers never charge twice; a failure while
 * reading the results is logged and not retried). Results are read bounded by
 * UPSTREAM_MAX_RESPONSE_BYTES and parsed line by line, yielding to the event loop.
 */
export async function observeMessageBatch(
  dependencies: BatchChargeDependencies,
  adapter: ProviderAdapter,
  context: RequestContext,
  batch: Record<string, unknown>,
  owner: OwnedResource | null,
): Promise<void> {
  if (owner === null || owner.charged || batch['processing_status'] !== 'ended') return;
  await chargeBatchOnce(dependencies, adapter, context, owner, {
    kind: 'message_batch',
    endpoint: '/v1/messages/batches',
    usageByModel: async () => {
      const response = await adapter.forward(
        { method: 'GET', path: resourcePath('messages/batches', owner.id, 'results'), headers: {}, body: null },
        { signal: context.signal, requestId: context.requestId },
      );
      if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, adapter.name);
      return resultsUsageByModel(await readBody(response, adapter.name, context.signal));
    },
  });
}

/** The summed usage (metering's shape) of the succeeded results, per answering model. */
async function resultsUsageByModel(text: string): Promise<Map<string, Record<string, unknown>>> {
  const sums = new Map<string, Record<string, unknown>>();
  await forEachJsonLine(text, (line) => {
    const result = line?.['result'] as Record<string, unknown> | null | undefined;
    if (result?.['type'] !== 'succeeded') return;
    const message = result['message'] as Record<string, unknown> | null | undefined;
    const usage = message?.['usage'];
    if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) return;
    const model = typeof message?.['model'] === 'string' ? message['model'] : 'unknown';
    let sum = sums.get(model);
    if (sum === undefined) sums.set(model, (sum = {}));
    const { raw_usage: _raw, ...metered } = meteredUsage(usage as Record<string, unknown>);
    addNumbers(sum, metered, 0);
  });
  return sums;
}

/**
 * The file ids a Messages request names (`document` and `image` blocks with `source.type: "file"`,
 * in messages and in tool results), each at most once. Linear in the body.
 */
export function messageFileIds(body: unknown): string[] {
  const ids = new Set<string>();
  const visit = (blocks: unknown, depth: number): void => {
    if (!Array.isArray(blocks)) return;
    for (const block of blocks) {
      if (typeof block !== 'object' || block === null) continue;
      const source = (block as { source?: unknown }).source;
      if (typeof source === 'object' && source !== null && (source as { type?: unknown }).type === 'file') {
        const id = (source as { file_id?: unknown }).file_id;
        if (typeof id === 'string') ids.add(id);
      }
      if (depth === 0) visit((block as { content?: unknown }).content, 1);
    }
  };
  const messages = typeof body === 'object' && body !== null ? (body as { messages?: unknown }).messages : undefined;
  if (Array.isArray(messages)) for (const message of messages) visit((message as { content?: unknown } | null)?.content, 0);
  const system = typeof body === 'object' && body !== null ? (body as { system?: unknown }).system : undefined;
  visit(system, 1);
  return [...ids];
}

/**
 * Every file a Messages request names must be one the caller may see on an Anthropic-type
 * instance (ids are the upstream's: a file lives on one instance), else 404 `file_not_found`
 * before anything is sent upstream: the same answer as for an unknown id.
 */
export async function assertMessageFilesVisible(
  catalog: ModelCatalog,
  store: OwnershipStore,
  caller: Caller,
  body: unknown,
): Promise<void> {
  const ids = messageFileIds(body);
  if (ids.length === 0) return;
  if (mayView(caller, null)) return;
  // One query per instance, whatever the number of ids; an id recorded on an instance belongs there.
  const owners = new Map<string, OwnedResource>();
  for (const adapter of anthropicInstances(catalog)) {
    for (const owner of await store.findMany('file', adapter.name, ids)) if (!owners.has(owner.id)) owners.set(owner.id, owner);
  }
  for (const id of ids) {
    if (!mayView(caller, owners.get(id) ?? null)) throw notOwned(ownedAnthropicFiles, id, 'file_id');
  }
}
