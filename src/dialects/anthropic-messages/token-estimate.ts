import { countTokens } from '../../core/tokenizer.ts';
import { isObject, type JsonObject } from './wire.ts';

/** Tokens counted for an image or a PDF, which are not text (Anthropic's images top out near 1,600). */
const imageTokens = 1600;
/** Framing tokens per message (role, separators), as chat formats add. */
const messageOverhead = 4;

/**
 * An estimate of a Messages request's input tokens for providers without a native count:
 * the system prompt, every message's text, tool calls and results, and the tool
 * definitions, counted with a real tokenizer (o200k_base, GPT-4o's), plus a few tokens of
 * framing per message and a flat count per image or document that is not text.
 */
export async function estimateInputTokens(body: JsonObject): Promise<number> {
  const texts: string[] = [];
  let fixed = 0;
  const add = (value: unknown): void => {
    fixed += collect(value, texts);
  };
  add(body['system']);
  const messages = Array.isArray(body['messages']) ? body['messages'] : [];
  for (const message of messages) {
    fixed += messageOverhead;
    add(isObject(message) ? message['content'] : message);
  }
  if (Array.isArray(body['tools'])) for (const tool of body['tools']) texts.push(JSON.stringify(tool));
  return fixed + (await countTokens(texts));
}

/** Pushes the text a block holds; answers the fixed token count of its non-text parts. */
function collect(value: unknown, texts: string[]): number {
  if (typeof value === 'string') {
    texts.push(value);
    return 0;
  }
  if (Array.isArray(value)) return value.reduce((sum: number, item: unknown) => sum + collect(item, texts), 0);
  if (!isObject(value)) return 0;
  switch (value['type']) {
    case 'image':
      return imageTokens;
    case 'document':
      return isObject(value['source']) && value['source']['type'] === 'text' ? collect(value['source']['data'], texts) : imageTokens;
    case 'tool_use':
      texts.push(`${String(value['name'])} ${JSON.stringify(value['input'] ?? {})}`);
      return 0;
    case 'tool_result':
      return collect(value['content'], texts);
    case 'thinking':
      return collect(value['thinking'], texts);
    default:
      return collect(value['text'], texts);
  }
}
