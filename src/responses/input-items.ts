import { randomBytes } from 'node:crypto';
import { invalidRequest, notFound } from '../errors/gateway-error.ts';
import type { ResponseItem } from './response-store.ts';
import { isJsonObject as isRecord } from '../core/json.ts';

/** Id prefixes OpenAI uses for the items it stores. */
const idPrefixes: Readonly<Record<string, string>> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  reasoning: 'rs',
};

/** A fresh item id in OpenAI's style (`msg_<hex>`). */
export function newItemId(type: unknown): string {
  const prefix = typeof type === 'string' ? (idPrefixes[type] ?? 'item') : 'item';
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

/**
 * A request's `input` as the list of items OpenAI stores for it: a string is one user
 * message, a message's string content becomes one text part, and every item gets an `id`
 * (its own, or a new one). `item_reference` items are kept for `resolveReferences`.
 */
export function normalizeInput(input: unknown): ResponseItem[] {
  if (input === undefined || input === null) return [];
  if (typeof input === 'string') return [userMessage(input)];
  if (!Array.isArray(input)) throw invalidRequest('input must be a string or an array of items', { code: 'invalid_body', param: 'input' });
  return input.map((item) => {
    if (!isRecord(item)) throw invalidRequest('each input item must be an object', { code: 'invalid_body', param: 'input' });
    if (item['type'] === 'item_reference') return item;
    const type = item['type'] ?? (item['role'] === undefined ? undefined : 'message');
    const normalized: ResponseItem = { ...item, id: typeof item['id'] === 'string' ? item['id'] : newItemId(type), type };
    if (type === 'message' && typeof item['content'] === 'string') {
      const part = item['role'] === 'assistant' ? 'output_text' : 'input_text';
      normalized['content'] = [{ type: part, text: item['content'] }];
    }
    return normalized;
  });
}

function userMessage(text: string): ResponseItem {
  return { id: newItemId('message'), type: 'message', role: 'user', content: [{ type: 'input_text', text }] };
}

/** The ids named by the `item_reference` items of `items`. */
export function referencedIds(items: readonly ResponseItem[]): string[] {
  const ids = new Set<string>();
  for (const item of items) {
    if (item['type'] !== 'item_reference') continue;
    const id = item['id'];
    if (typeof id !== 'string' || id === '') {
      throw invalidRequest('item_reference.id must be a non-empty string', { code: 'invalid_body', param: 'input' });
    }
    ids.add(id);
  }
  return [...ids];
}

/** `items` with each `item_reference` replaced by the item it names; an unknown id is a 404. */
export function resolveReferences(items: readonly ResponseItem[], found: ReadonlyMap<string, ResponseItem>): ResponseItem[] {
  return items.map((item) => {
    if (item['type'] !== 'item_reference') return item;
    const id = String(item['id']);
    const referenced = found.get(id);
    if (referenced === undefined) {
      throw notFound(`Item with id '${id}' not found.`, { code: 'item_not_found', param: 'input' });
    }
    return referenced;
  });
}
