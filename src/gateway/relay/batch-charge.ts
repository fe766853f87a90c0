import type { Logger } from 'pino';
import type { Principal } from '../../auth/principal.ts';
import type { OwnedKind, OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import type { Metering } from '../../usage/metering.ts';
import type { RequestContext } from '../request-context.ts';
import { forEachJsonLine, readFileContent } from './batch-files.ts';

export interface BatchChargeDependencies {
  ownership: OwnershipStore;
  metering: Metering;
  logger?: Pick<Logger, 'warn'> | null;
}

/**
 * What the gateway does with a batch object it reads (create, retrieve, list, cancel): the
 * files the batch produced belong to the batch's owner, and a completed batch's cost is
 * charged once to the owner's budgets and usage (the store's `charged` flag is set first, so
 * concurrent readers never charge twice; a failure while reading the output file is logged
 * and not retried).
 */
export async function observeBatch(
  dependencies: BatchChargeDependencies,
  adapter: ProviderAdapter,
  context: RequestContext,
  batch: Record<string, unknown>,
  owner: OwnedResource | null,
): Promise<void> {
  if (owner === null) return;
  const produced = ['output_file_id', 'error_file_id']
    .map((field) => batch[field])
    .filter((id): id is string => typeof id === 'string' && id !== '');
  const now = Date.now();
  await dependencies.ownership.recordMany(
    produced.map((id) => ({
      kind: 'file',
      id,
      instance: adapter.name,
      userPath: owner.userPath,
      keyId: owner.keyId,
      createdAt: now,
      charged: false,
    })),
  );
  const outputFileId = batch['output_file_id'];
  if (batch['status'] !== 'completed' || owner.charged || typeof outputFileId !== 'string' || outputFileId === '') return;
  await chargeBatchOnce(dependencies, adapter, context, owner, {
    kind: 'batch',
    endpoint: '/v1/batches',
    usageByModel: async () => usageByModel(await readFileContent(adapter, context, outputFileId)),
  });
}

/** A finished batch of some API: its owner kind, its usage endpoint, and how its usage per model is read. */
export interface FinishedBatch {
  readonly kind: OwnedKind;
  readonly endpoint: string;
  readonly usageByModel: () => Promise<Map<string, Record<string, unknown>>>;
}

/**
 * Charges a finished batch once to its owner: the owner row is marked charged first and only the
 * request that marked it reads the usage and reports it, per model; a failure while reading is
 * logged and not retried (the provider's results are the only source).
 */
export async function chargeBatchOnce(
  dependencies: BatchChargeDependencies,
  adapter: ProviderAdapter,
  context: RequestContext,
  owner: OwnedResource,
  batch: FinishedBatch,
): Promise<void> {
  if (!(await dependencies.ownership.markCharged(batch.kind, adapter.name, owner.id))) return;
  try {
    const ownerContext = ownerContextOf(owner, context);
    for (const [model, usage] of await batch.usageByModel()) {
      dependencies.metering.report({
        context: ownerContext,
        endpoint: batch.endpoint,
        provider: adapter.name,
        model,
        usage,
        status: 200,
        stream: false,
      });
    }
  } catch (error) {
    dependencies.logger?.warn(
      { err: error, batch_id: owner.id, provider: adapter.name, kind: batch.kind },
      'charging a finished batch failed',
    );
  }
}

/** The summed `usage` of the output file's successful lines, per answering model. */
async function usageByModel(text: string): Promise<Map<string, Record<string, unknown>>> {
  const sums = new Map<string, Record<string, unknown>>();
  await forEachJsonLine(text, (line) => {
    const response = line?.['response'] as Record<string, unknown> | null | undefined;
    const body = response?.['body'] as Record<string, unknown> | null | undefined;
    const usage = body?.['usage'];
    if (typeof usage !== 'object' || usage === null) return;
    const model = typeof body?.['model'] === 'string' ? body['model'] : 'unknown';
    let sum = sums.get(model);
    if (sum === undefined) sums.set(model, (sum = {}));
    addNumbers(sum, usage as Record<string, unknown>, 0);
  });
  return sums;
}

/** Adds the finite numbers of `from` into `into`, one level of nested objects deep (`prompt_tokens_details`). */
export function addNumbers(into: Record<string, unknown>, from: Record<string, unknown>, depth: number): void {
  for (const [key, value] of Object.entries(from)) {
    if (typeof value === 'number' && Number.isFinite(value)) {
      const before = into[key];
      into[key] = (typeof before === 'number' ? before : 0) + value;
    } else if (depth === 0 && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const nested = typeof into[key] === 'object' && into[key] !== null ? (into[key] as Record<string, unknown>) : {};
      into[key] = nested;
      addNumbers(nested, value as Record<string, unknown>, depth + 1);
    }
  }
}

/** A resource's owner as the one its cost is charged to (its user path, its key id). */
export function ownerContextOf(owner: Pick<OwnedResource, 'userPath' | 'keyId'>, context: RequestContext): RequestContext {
  const principal: Principal = { kind: owner.keyId === null ? 'master' : 'api_key', keyId: owner.keyId, boundUserPath: owner.userPath };
  return { requestId: context.requestId, principal, userPath: owner.userPath, startedAt: performance.now(), signal: context.signal };
}
