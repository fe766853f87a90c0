import type { UpstreamModel } from '../provider.ts';
import { isRecord } from './wire.ts';

/**
 * The model ids of the control plane's `GET /foundation-models` answer
 * (`{modelSummaries: [{modelId, modelLifecycle: {status}, outputModalities, ...}]}`):
 * models that are not ACTIVE (legacy) are left out. Null when the answer is unreadable.
 */
export function parseModelList(text: string): UpstreamModel[] | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const summaries = isRecord(parsed) ? parsed['modelSummaries'] : undefined;
  if (!Array.isArray(summaries)) return null;
  const models: UpstreamModel[] = [];
  for (const summary of summaries) {
    if (!isRecord(summary) || typeof summary['modelId'] !== 'string') continue;
    const lifecycle = summary['modelLifecycle'];
    if (isRecord(lifecycle) && typeof lifecycle['status'] === 'string' && lifecycle['status'] !== 'ACTIVE') continue;
    models.push({ id: summary['modelId'] });
  }
  return models;
}
