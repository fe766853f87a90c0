import type { UpstreamModel } from '../provider.ts';
import { parseJsonObject } from '../../core/json.ts';

/** Reads OpenAI's `{"object":"list","data":[{"id",...}]}`; null when the shape is wrong. */
export function parseModelList(text: string): UpstreamModel[] | null {
  const data = parseJsonObject(text)?.['data'];
  if (!Array.isArray(data)) return null;
  const models: UpstreamModel[] = [];
  for (const entry of data) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { id, created } = entry as { id?: unknown; created?: unknown };
    if (typeof id !== 'string' || id === '') continue;
    models.push(typeof created === 'number' ? { id, created } : { id });
  }
  return models;
}
