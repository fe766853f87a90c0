/** Fields of admin views that move on their own (spend, counters, connections): not changes. */
const volatileFields = new Set([
  'spent',
  'remaining',
  'period_start',
  'period_end',
  'window_start',
  'window_end',
  'requests_used',
  'requests_remaining',
  'tokens_used',
  'tokens_remaining',
  'in_flight',
  'status',
  'last_error',
  'connected_at',
  'tool_count',
  'excluded_tool_count',
  'prompt_count',
  'resource_count',
]);

/** Field names whose values are secrets wherever they appear. */
const secretFields = /^(key|secret|api_key|token|password|authorization|headers|env)$/i;
export const redactedValue = '***';

/** The items of a `GET /admin/<collection>` answer: the array itself, or the object's first array. */
export function listItems(body: unknown): unknown[] | null {
  if (Array.isArray(body)) return body.map(clean);
  if (typeof body !== 'object' || body === null) return null;
  const list = Object.values(body).find((value) => Array.isArray(value));
  return Array.isArray(list) ? list.map(clean) : null;
}

/** Drops volatile fields and redacts secrets (values of secret-named fields become `***`). */
function clean(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clean);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value)
    .filter(([name]) => !volatileFields.has(name))
    .map(([name, field]) => [name, secretFields.test(name) ? redactSecret(field) : clean(field)]);
  return Object.fromEntries(entries);
}

function redactSecret(value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'object' && !Array.isArray(value))
    return Object.fromEntries(Object.keys(value).map((name) => [name, redactedValue]));
  return redactedValue;
}

export interface ItemChange {
  /** One item: the object; several: their list; none: null. */
  readonly before: unknown;
  readonly after: unknown;
  /** The `id`, `slug`, `name` or `model` of the one changed item, if that is what changed. */
  readonly identity: string | null;
}

/** The items that are only in `before` (removed or changed) and only in `after` (added or changed). */
export function changedItems(before: unknown[] | null, after: unknown[] | null): ItemChange {
  const keys = (items: unknown[] | null) => new Set((items ?? []).map((item) => JSON.stringify(item)));
  const beforeKeys = keys(before);
  const afterKeys = keys(after);
  const removed = (before ?? []).filter((item) => !afterKeys.has(JSON.stringify(item)));
  const added = (after ?? []).filter((item) => !beforeKeys.has(JSON.stringify(item)));
  const identities = new Set([...removed, ...added].map(identityOf));
  const identity = identities.size === 1 ? ([...identities][0] ?? null) : null;
  return { before: collapse(removed), after: collapse(added), identity };
}

const collapse = (items: unknown[]): unknown => (items.length === 0 ? null : items.length === 1 ? items[0] : items);

function identityOf(item: unknown): string | null {
  if (typeof item !== 'object' || item === null) return null;
  const record = item as Record<string, unknown>;
  for (const field of ['id', 'slug', 'name', 'model']) {
    const value = record[field];
    if (typeof value === 'string' && value !== '') return value;
  }
  return null;
}
