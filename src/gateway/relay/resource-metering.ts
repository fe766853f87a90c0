import { isJsonObject, parseJsonObject } from '../../core/json.ts';
import type { OwnedKind, OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import type { SseEvent } from '../../streaming/sse-parser.ts';
import type { Metering } from '../../usage/metering.ts';
import type { RequestContext } from '../request-context.ts';
import { ownerContextOf } from './batch-charge.ts';
import { meteredChargesOf, type Charge, type PriceOf } from './metered-charges.ts';
import type { MeteredKind } from './openai-resources.ts';

export interface ResourceMeteringDependencies {
  readonly ownership: OwnershipStore;
  readonly metering: Metering;
}

/** Where a metered object was seen: its kind, its instance, the request that saw it. */
export interface MeteredAnswer {
  readonly kind: MeteredKind;
  readonly adapter: ProviderAdapter;
  readonly context: RequestContext;
  /**
   * Who a run or an eval run is charged to when it has no charge row yet: the owner of the
   * path's thread or eval, else (on a route that ran it) the caller; null: nobody (an admin
   * reading a run the gateway never saw created), so it is not charged.
   */
  readonly owner: Pick<OwnedResource, 'userPath' | 'keyId'> | null;
  readonly status: number;
  readonly stream: boolean;
}

/** The usage endpoint of each kind: one per resource, whichever route saw it (a retrieve, a list, a cancel). */
const endpoints: Readonly<Record<MeteredKind, string>> = {
  run: '/v1/threads/runs',
  eval_run: '/v1/evals/runs',
  fine_tuning_job: '/v1/fine_tuning/jobs',
  video: '/v1/videos',
  vector_store_search: '/v1/vector_stores/search',
};

/** The owner row that carries each kind's `charged` flag. */
const chargeKinds: Readonly<Record<Exclude<MeteredKind, 'vector_store_search'>, OwnedKind>> = {
  run: 'run',
  eval_run: 'eval_run',
  fine_tuning_job: 'fine_tuning_job',
  video: 'video',
};

/** A search answer is one free call (cost 0): the model behind it is the provider's own. */
export const searchModel = 'vector_store_search';

/**
 * Charges what a JSON answer shows: a search (one call, cost 0, every time), or each finished
 * run, eval run, fine-tuning job or video in it (an object, or a list's `data`), once.
 */
export async function chargeAnswer(
  dependencies: ResourceMeteringDependencies,
  answer: MeteredAnswer,
  body: Record<string, unknown>,
): Promise<void> {
  if (answer.kind === 'vector_store_search') {
    if (answer.owner !== null) report(dependencies, answer, answer.owner, { model: searchModel, usage: {}, costUsd: 0 });
    return;
  }
  const objects = body['object'] === 'list' && Array.isArray(body['data']) ? (body['data'] as unknown[]) : [body];
  for (const object of objects) {
    if (isJsonObject(object)) await chargeSeen(dependencies, answer, object);
  }
}

/**
 * Charges a finished object once to its owner: the owner row of its kind (a job's, a video's;
 * a run's or an eval run's is recorded now under `answer.owner`) is marked charged first, and
 * only the one reader that changed it reports, so concurrent reads never charge twice.
 */
export async function chargeSeen(
  dependencies: ResourceMeteringDependencies,
  answer: MeteredAnswer,
  object: Record<string, unknown>,
  known: OwnedResource | null = null,
): Promise<void> {
  if (answer.kind === 'vector_store_search') return;
  const priceOf: PriceOf = (model) => dependencies.metering.priceOf(answer.adapter.name, model);
  const charges = meteredChargesOf(answer.kind, object, priceOf);
  const id = object['id'];
  if (charges.length === 0 || typeof id !== 'string' || id === '') return;
  const kind = chargeKinds[answer.kind];
  const instance = answer.adapter.name;
  let row = known ?? (await dependencies.ownership.find(kind, instance, id));
  if (row === null && answer.owner !== null && (kind === 'run' || kind === 'eval_run')) {
    const { userPath, keyId } = answer.owner;
    await dependencies.ownership.record({ kind, id, instance, userPath, keyId, createdAt: Date.now(), charged: false });
    row = await dependencies.ownership.find(kind, instance, id);
  }
  if (row === null || row.charged || !(await dependencies.ownership.markCharged(kind, instance, id))) return;
  for (const charge of charges) report(dependencies, answer, row, charge);
}

/**
 * The observer of a streamed run (createAndRun, a run, submit_tool_outputs with `stream: true`):
 * the `thread.created` event's thread is recorded as `threadOwner`'s (when given), a run's
 * terminal event (`thread.run.completed`, `failed`, `incomplete`, `cancelled`, `expired`) is
 * charged. Each returns its work, to be awaited before the stream's end reaches the client.
 */
export function runStreamObserver(
  dependencies: ResourceMeteringDependencies,
  answer: MeteredAnswer,
  threadOwner: OwnedResource | null,
): (event: SseEvent) => Promise<void> | null {
  return (event) => {
    const name = event.event ?? '';
    const recordsThread = name === 'thread.created' && threadOwner !== null;
    if (!recordsThread && !terminalRunEvents.has(name)) return null;
    const object = parseJsonObject(event.data);
    if (object === null) return null;
    if (!recordsThread) return chargeSeen(dependencies, answer, object);
    const id = object['id'];
    return typeof id === 'string' && id !== '' ? dependencies.ownership.record({ ...threadOwner, id, createdAt: Date.now() }) : null;
  };
}

const terminalRunEvents: ReadonlySet<string> = new Set(
  ['completed', 'failed', 'incomplete', 'cancelled', 'expired'].map((status) => `thread.run.${status}`),
);

function report(
  dependencies: ResourceMeteringDependencies,
  answer: MeteredAnswer,
  owner: Pick<OwnedResource, 'userPath' | 'keyId'>,
  charge: Charge,
): void {
  dependencies.metering.report({
    context: ownerContextOf(owner, answer.context),
    endpoint: endpoints[answer.kind],
    provider: answer.adapter.name,
    model: charge.model,
    usage: charge.usage,
    status: answer.status,
    stream: answer.stream,
    ...(charge.costUsd === undefined ? {} : { costUsd: charge.costUsd }),
  });
}
