import type { UpstreamModel } from '../provider.ts';
import { isRecord } from './wire.ts';
import { parseJsonObject } from '../../core/json.ts';

export interface ModelPage {
  models: UpstreamModel[];
  /** The `after_id` of the next page, or null on the last one. */
  next: string | null;
}

/**
 * Reads one page of Anthropic's `GET /models`: `{data: [{id, created_at, ...}], has_more,
 * last_id}`. `created_at` is an RFC 3339 time, reported as Unix seconds. Null when the shape
 * is wrong.
 */
export function parseModelPage(text: string): ModelPage | null {
  const parsed = parseJsonObject(text);
  if (parsed === null || !Array.isArray(parsed['data'])) return null;
  const models: UpstreamModel[] = [];
  for (const entry of parsed['data'] as unknown[]) {
    if (!isRecord(entry) || typeof entry['id'] !== 'string' || entry['id'] === '') continue;
    const created = typeof entry['created_at'] === 'string' ? Date.parse(entry['created_at']) : Number.NaN;
    models.push(Number.isFinite(created) ? { id: entry['id'], created: Math.floor(created / 1000) } : { id: entry['id'] });
  }
  const last = parsed['last_id'];
  const next = parsed['has_more'] === true && typeof last === 'string' && last !== '' ? last : null;
  return { models, next };
}
