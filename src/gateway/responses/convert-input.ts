import { invalidRequest } from '../../errors/gateway-error.ts';

/** A chat message as sent upstream (OpenAI's shape). */
export type ChatMessage = Record<string, unknown>;

type Item = Record<string, unknown>;

const isRecord = (value: unknown): value is Item => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A Responses feature a chat upstream cannot honour: 400 naming the field and the provider. */
export function unsupported(what: string, param: string, provider: string): Error {
  return invalidRequest(`${what} is not supported by /v1/responses through provider ${provider} (translated to chat completions)`, {
    code: 'unsupported_parameter',
    param,
  });
}

/**
 * Responses `instructions` + `input` -> chat `messages`. `input` is a string (one user
 * message) or a list of items: messages (`input_text`, `input_image`, `input_file`,
 * `input_audio` and, in history, `output_text` parts), `function_call` items (merged into
 * the preceding assistant turn) and `function_call_output` items (tool messages).
 * Reasoning items from earlier turns are dropped: chat cannot take them back.
 */
export function inputToMessages(instructions: unknown, input: unknown, provider: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions !== undefined && instructions !== null) {
    if (typeof instructions !== 'string')
      throw invalidRequest('instructions must be a string', { code: 'invalid_body', param: 'instructions' });
    if (instructions !== '') messages.push({ role: 'system', content: instructions });
  }
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input });
    return messages;
  }
  if (input === undefined || input === null)
    throw invalidRequest('you must provide an input parameter', { code: 'missing_field', param: 'input' });
  if (!Array.isArray(input)) throw invalidRequest('input must be a string or an array of items', { code: 'invalid_body', param: 'input' });
  for (const item of input) {
    if (!isRecord(item)) throw invalidRequest('each input item must be an object', { code: 'invalid_body', param: 'input' });
    appendItem(messages, item, provider);
  }
  return messages;
}

function appendItem(messages: ChatMessage[], item: Item, provider: string): void {
  const type = item['type'] ?? (item['role'] === undefined ? undefined : 'message');
  switch (type) {
    case 'message':
      messages.push(messageOf(item, provider));
      return;
    case 'function_call':
      appendFunctionCall(messages, item);
      return;
    case 'function_call_output':
      messages.push({ role: 'tool', tool_call_id: stringField(item, 'call_id'), content: toolOutputOf(item['output'], provider) });
      return;
    case 'reasoning':
      return;
    default:
      throw unsupported(`input item type ${JSON.stringify(type ?? null)}`, 'input', provider);
  }
}

function messageOf(item: Item, provider: string): ChatMessage {
  const role = item['role'];
  if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer') {
    throw invalidRequest('an input message role must be user, assistant, system or developer', { code: 'invalid_body', param: 'input' });
  }
  // Chat upstreams other than OpenAI rarely know `developer`; it means the same as `system`.
  return { role: role === 'developer' ? 'system' : role, content: contentOf(item['content'], provider) };
}

/** A string stays a string; parts become chat parts, and text-only parts one string. */
function contentOf(content: unknown, provider: string): unknown {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content))
    throw invalidRequest('message content must be a string or an array of parts', { code: 'invalid_body', param: 'input' });
  const parts = content.map((part) => partOf(part, provider));
  if (parts.every((part) => part['type'] === 'text')) return parts.map((part) => part['text']).join('\n');
  return parts;
}

function partOf(part: unknown, provider: string): Item {
  if (!isRecord(part)) throw invalidRequest('each content part must be an object', { code: 'invalid_body', param: 'input' });
  switch (part['type']) {
    case 'input_text':
    case 'output_text':
    case 'text':
      return { type: 'text', text: stringField(part, 'text') };
    case 'refusal':
      return { type: 'text', text: stringField(part, 'refusal') };
    case 'input_image': {
      const url = part['image_url'];
      if (typeof url !== 'string') throw unsupported('an input_image without image_url (file_id)', 'input', provider);
      const detail = part['detail'];
      return { type: 'image_url', image_url: typeof detail === 'string' ? { url, detail } : { url } };
    }
    case 'input_file': {
      const file: Item = {};
      for (const field of ['file_id', 'file_data', 'file_url', 'filename']) if (typeof part[field] === 'string') file[field] = part[field];
      return { type: 'file', file };
    }
    case 'input_audio':
      return { type: 'input_audio', input_audio: part['input_audio'] };
    default:
      throw unsupported(`content part type ${JSON.stringify(part['type'] ?? null)}`, 'input', provider);
  }
}

/** A function call of an earlier turn joins the assistant message just before it, if any. */
function appendFunctionCall(messages: ChatMessage[], item: Item): void {
  const call = {
    id: stringField(item, 'call_id'),
    type: 'function',
    function: { name: stringField(item, 'name'), arguments: typeof item['arguments'] === 'string' ? item['arguments'] : '{}' },
  };
  const last = messages.at(-1);
  if (last !== undefined && last['role'] === 'assistant') {
    last['tool_calls'] = [...((last['tool_calls'] as unknown[] | undefined) ?? []), call];
    return;
  }
  messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function toolOutputOf(output: unknown, provider: string): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    const parts = output.map((part) => partOf(part, provider));
    if (parts.every((part) => part['type'] === 'text')) return parts.map((part) => part['text']).join('\n');
    throw unsupported('a function_call_output with non-text parts', 'input', provider);
  }
  throw invalidRequest('function_call_output.output must be a string', { code: 'invalid_body', param: 'input' });
}

function stringField(item: Item, field: string): string {
  const value = item[field];
  if (typeof value !== 'string')
    throw invalidRequest(`${String(item['type'] ?? 'item')}.${field} must be a string`, { code: 'invalid_body', param: 'input' });
  return value;
}
