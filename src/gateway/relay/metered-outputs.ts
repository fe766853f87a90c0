import { isJsonObject } from '../../core/json.ts';
import type { OwnedResource } from '../../ownership/ownership-store.ts';
import type { MeteredKind } from './openai-resources.ts';
import { readObject } from './owned-resources.ts';
import { chargeSeen, type MeteredAnswer, type ResourceMeteringDependencies } from './resource-metering.ts';
import { resourcePath } from './resources.ts';

/** Runs a thread's messages name that are settled per answer at most (each costs one upstream read, once). */
export const maximumRunsSettled = 20;

const assistantsBeta = { 'openai-beta': 'assistants=v2' };

/**
 * An output read without its source (a video's content, a job's events or checkpoints, an eval
 * run's output items, a run's steps) would let a caller take what a model made and never read
 * the finished object that charges it. So before such an output is relayed, its source is read
 * once from the upstream while its charge row is not marked charged, and charged if finished.
 * A video or a job without an owner row (an admin's read of one the gateway never saw created)
 * is not read: nobody would be charged.
 */
export async function settleSource(
  dependencies: ResourceMeteringDependencies,
  answer: MeteredAnswer & { readonly kind: Exclude<MeteredKind, 'vector_store_search'> },
  params: Readonly<Record<string, string>>,
  parent: OwnedResource | null,
): Promise<void> {
  const instance = answer.adapter.name;
  const at = (name: string): string => params[name] ?? '';
  switch (answer.kind) {
    case 'video':
      if (parent !== null && !parent.charged) await settle(dependencies, answer, resourcePath('videos', at('video_id')), parent);
      return;
    case 'fine_tuning_job':
      if (parent !== null && !parent.charged) {
        await settle(dependencies, answer, resourcePath('fine_tuning/jobs', at('fine_tuning_job_id')), parent);
      }
      return;
    case 'eval_run': {
      const row = await dependencies.ownership.find('eval_run', instance, at('run_id'));
      if (row?.charged !== true)
        await settle(dependencies, answer, resourcePath(resourcePath('evals', at('eval_id'), 'runs'), at('run_id')), row);
      return;
    }
    case 'run':
      if (params['run_id'] !== undefined) await settleRuns(dependencies, answer, at('thread_id'), [at('run_id')]);
  }
}

/** A thread's messages (one, or a list's `data`): the runs that wrote them are settled, as `settleSource` does. */
export async function settleMessageRuns(
  dependencies: ResourceMeteringDependencies,
  answer: MeteredAnswer,
  threadId: string,
  body: Record<string, unknown>,
): Promise<void> {
  const messages = body['object'] === 'list' && Array.isArray(body['data']) ? (body['data'] as unknown[]) : [body];
  const runIds = new Set<string>();
  for (const message of messages) {
    const runId = isJsonObject(message) ? message['run_id'] : undefined;
    if (typeof runId === 'string' && runId !== '') runIds.add(runId);
  }
  await settleRuns(dependencies, answer, threadId, [...runIds]);
}

async function settleRuns(
  dependencies: ResourceMeteringDependencies,
  answer: MeteredAnswer,
  threadId: string,
  runIds: readonly string[],
): Promise<void> {
  if (runIds.length === 0) return;
  const charged = new Set(
    (await dependencies.ownership.findMany('run', answer.adapter.name, runIds)).filter((row) => row.charged).map((row) => row.id),
  );
  const open = runIds.filter((id) => !charged.has(id)).slice(0, maximumRunsSettled);
  for (const runId of open) {
    await settle(
      dependencies,
      { ...answer, kind: 'run' },
      resourcePath(resourcePath('threads', threadId, 'runs'), runId),
      null,
      assistantsBeta,
    );
  }
}

async function settle(
  dependencies: ResourceMeteringDependencies,
  answer: MeteredAnswer,
  path: string,
  known: OwnedResource | null,
  headers: Readonly<Record<string, string>> = {},
): Promise<void> {
  const object = await readObject(answer.adapter, answer.context, path, headers);
  if (object !== null) await chargeSeen(dependencies, answer, object, known);
}
