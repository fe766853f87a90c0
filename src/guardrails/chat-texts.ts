import type { ChatRequestBody } from '../providers/provider.ts';
import { isJsonObject as isObject } from '../core/json.ts';

type Json = Record<string, unknown>;

/** Every text a chat request sends: message contents and their text parts. */
export function* chatTexts(body: ChatRequestBody): Generator<string> {
  const messages = (body as Json)['messages'];
  if (!Array.isArray(messages)) return;
  for (const message of messages) {
    if (!isObject(message)) continue;
    const content = message['content'];
    if (typeof content === 'string') yield content;
    else if (Array.isArray(content)) for (const part of content) if (isObject(part) && typeof part['text'] === 'string') yield part['text'];
  }
}

/**
 * The request with `change` applied to every message text; the same object when nothing
 * changed (the caller's body is never mutated: a retry sends the same request again).
 */
export function mapChatTexts(body: ChatRequestBody, change: (text: string) => string): ChatRequestBody {
  const messages = (body as Json)['messages'];
  if (!Array.isArray(messages)) return body;
  const mapped = mapItems(messages, (message) => {
    if (!isObject(message)) return message;
    const content = mapContent(message['content'], change);
    return content === message['content'] ? message : { ...message, content };
  });
  return mapped === messages ? body : ({ ...body, messages: mapped } as ChatRequestBody);
}

/** `items` with `change` applied to each; copied only from the first item it changes (the same array when none). */
function mapItems(items: readonly unknown[], change: (item: unknown) => unknown): readonly unknown[] {
  let mapped: unknown[] | null = null;
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const changed = change(item);
    if (changed === item) continue;
    mapped ??= items.slice();
    mapped[index] = changed;
  }
  return mapped ?? items;
}

function mapContent(content: unknown, change: (text: string) => string): unknown {
  if (typeof content === 'string') return change(content);
  if (!Array.isArray(content)) return content;
  return mapItems(content, (part) => {
    if (!isObject(part) || typeof part['text'] !== 'string') return part;
    const text = change(part['text']);
    return text === part['text'] ? part : { ...part, text };
  });
}

/** A chat completion answer with `change` applied to each choice's message content (null when none changed). */
export function mapAnswerTexts(answer: Json, change: (text: string) => string): Json | null {
  const choices = answer['choices'];
  if (!Array.isArray(choices)) return null;
  const mapped = mapItems(choices, (choice) => {
    if (!isObject(choice) || !isObject(choice['message'])) return choice;
    const message = choice['message'];
    const content = mapContent(message['content'], change);
    return content === message['content'] ? choice : { ...choice, message: { ...message, content } };
  });
  return mapped === choices ? null : { ...answer, choices: mapped };
}
