import type { ApiKeyActivity, RequestLogStore } from '../request-log/request-log-store.ts';
import { invalidParameter, isoTime } from './admin-errors.ts';

const unitMilliseconds = { h: 3_600_000, d: 86_400_000 } as const;
const defaultWindow = 30 * unitMilliseconds.d;
const longestWindow = 366 * unitMilliseconds.d;

/** `window` of the API-key listing: `<n>h` or `<n>d` (`24h`, `7d`, `30d`), up to 366 days; default 30 days. */
export function readActivityWindow(value: unknown): number {
  if (value === undefined || value === '') return defaultWindow;
  const match = typeof value === 'string' ? /^([1-9]\d{0,4})([hd])$/.exec(value) : null;
  const span = match?.[1] !== undefined && match[2] !== undefined ? Number(match[1]) * unitMilliseconds[match[2] as 'h' | 'd'] : 0;
  if (span === 0 || span > longestWindow)
    throw invalidParameter('window', '`window` must be a number of hours or days such as 24h, 7d or 30d (at most 366d)');
  return span;
}

export interface KeyActivityFields {
  readonly last_used_at: string | null;
  readonly requests: number | null;
  readonly cost_usd: number | null;
}

const unknown: KeyActivityFields = { last_used_at: null, requests: null, cost_usd: null };
const idle: KeyActivityFields = { last_used_at: null, requests: 0, cost_usd: 0 };

/**
 * Every key's activity over the last `window` milliseconds, read in one grouped query, as a
 * lookup by key id: null fields without a request log, zeros for a key not used in the window.
 */
export async function activityByKey(store: RequestLogStore | null, window: number): Promise<(id: string) => KeyActivityFields> {
  if (store === null) return () => unknown;
  const rows = await store.keyActivity(Date.now() - window);
  const byId = new Map<string, ApiKeyActivity>(rows.map((row) => [row.apiKeyId, row]));
  return (id) => {
    const row = byId.get(id);
    if (row === undefined) return idle;
    const cost = row.costUsd === null ? null : Math.round(row.costUsd * 1e10) / 1e10;
    return { last_used_at: isoTime(row.lastUsedAt), requests: row.requests, cost_usd: cost };
  };
}
