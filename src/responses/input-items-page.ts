import { invalidRequest } from '../errors/gateway-error.ts';
import type { ResponseItem } from './response-store.ts';

export interface PageQuery {
  limit?: unknown;
  order?: unknown;
  after?: unknown;
}

/** OpenAI's list shape of `GET /v1/responses/{id}/input_items`. */
export interface InputItemsPage {
  object: 'list';
  data: ResponseItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** One page of a response's input items: `order` (`desc` by default), after the item `after`, `limit` (1-100, 20). */
export function pageOf(items: readonly ResponseItem[], query: PageQuery): InputItemsPage {
  const limit = limitOf(query.limit);
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') {
    throw invalidRequest('order must be asc or desc', { code: 'invalid_parameter', param: 'order' });
  }
  const ordered = order === 'asc' ? [...items] : [...items].reverse();
  let start = 0;
  if (typeof query.after === 'string' && query.after !== '') {
    const index = ordered.findIndex((item) => item['id'] === query.after);
    start = index === -1 ? ordered.length : index + 1;
  }
  const data = ordered.slice(start, start + limit);
  const idOf = (item: ResponseItem | undefined): string | null => (typeof item?.['id'] === 'string' ? item['id'] : null);
  return { object: 'list', data, first_id: idOf(data[0]), last_id: idOf(data.at(-1)), has_more: start + limit < ordered.length };
}

function limitOf(raw: unknown): number {
  if (raw === undefined || raw === '') return 20;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw invalidRequest('limit must be an integer from 1 to 100', { code: 'invalid_parameter', param: 'limit' });
  }
  return limit;
}
