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
  let changed = false;
  const mapped = messages.map((message: unknown) => {
    if (!isObject(message)) return message;
    const content = mapContent(message['content'], change);
    if (content === message['content']) return message;
    changed = true;
    return { ...message, content };
  });
  return changed ? ({ ...body, messages: mapped } as ChatRequestBody) : body;
}

function mapContent(content: unknown, change: (text: string) => string): unknown {
  if (typeof content === 'string') return change(content);
  if (!Array.isArray(content)) return content;
  let changed = false;
  const parts = content.map((part: unknown) => {
    if (!isObject(part) || typeof part['text'] !== 'string') return part;
    const text = change(part['text']);
    if (text === part['text']) return part;
    changed = true;
    return { ...part, text };
  });
  return changed ? parts : content;
}

/** A chat completion answer with `change` applied to each choice's message content (null when none changed). */
export function mapAnswerTexts(answer: Json, change: (text: string) => string): Json | null {
  const choices = answer['choices'];
  if (!Array.isArray(choices)) return null;
  let changed = false;
  const mapped = choices.map((choice: unknown) => {
    if (!isObject(choice) || !isObject(choice['message'])) return choice;
    const message = choice['message'];
    const content = mapContent(message['content'], change);
    if (content === message['content']) return choice;
    changed = true;
    return { ...choice, message: { ...message, content } };
  });
  return changed ? { ...answer, choices: mapped } : null;
}
