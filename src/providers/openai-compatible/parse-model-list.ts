import type { UpstreamModel } from '../provider.ts';

/** Reads OpenAI's `{"object":"list","data":[{"id",...}]}`; null when the shape is wrong. */
export function parseModelList(text: string): UpstreamModel[] | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const data = typeof parsed === 'object' && parsed !== null ? (parsed as { data?: unknown }).data : undefined;
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
