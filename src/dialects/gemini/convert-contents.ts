import { field, invalid, isObject, type JsonObject } from './wire.ts';

/**
 * Gemini `contents` as OpenAI chat messages. `user` turns become user messages (text,
 * images, audio and PDF documents as content parts) preceded by one `tool` message per
 * `functionResponse`; `model` turns become assistant messages whose `functionCall` parts are
 * `tool_calls`. Gemini pairs calls and responses by name (and by `id` when the client kept
 * one), OpenAI by id: calls without one get `call_<n>`, and each response takes the oldest
 * open call of its name. Thought parts (and their signatures) are the model's own and dropped.
 */
export function toChatMessages(contents: unknown): JsonObject[] {
  if (!Array.isArray(contents) || contents.length === 0) throw invalid('contents: must be a non-empty array', 'contents');
  const calls = new CallIds();
  const messages: JsonObject[] = [];
  contents.forEach((content: unknown, index) => {
    const path = `contents[${index}]`;
    if (!isObject(content)) throw invalid(`${path}: must be an object`, 'contents');
    const parts = field(content, 'parts');
    if (!Array.isArray(parts)) throw invalid(`${path}.parts: must be an array`, 'contents');
    const role = content['role'] ?? 'user';
    if (role === 'model') messages.push(...modelTurn(parts, path, calls));
    else if (role === 'user' || role === 'function') messages.push(...userTurn(parts, path, calls));
    else throw invalid(`${path}.role: must be 'user' or 'model'`, 'contents');
  });
  return messages;
}

/** The text of a system instruction (a Content, or a plain string). */
export function systemText(instruction: unknown): string | null {
  if (instruction === undefined || instruction === null) return null;
  if (typeof instruction === 'string') return instruction;
  const parts = isObject(instruction) ? field(instruction, 'parts') : undefined;
  if (!Array.isArray(parts)) throw invalid('systemInstruction: must be a Content with parts', 'systemInstruction');
  const texts = parts.map((part: unknown, index) => {
    const text = isObject(part) ? part['text'] : undefined;
    if (typeof text !== 'string') throw invalid(`systemInstruction.parts[${index}]: only text parts are supported`, 'systemInstruction');
    return text;
  });
  return texts.join('\n');
}

class CallIds {
  private next = 0;
  private readonly open = new Map<string, string[]>();

  forCall(name: string, id: unknown): string {
    const callId = typeof id === 'string' && id !== '' ? id : `call_${this.next++}`;
    this.open.set(name, [...(this.open.get(name) ?? []), callId]);
    return callId;
  }

  forResponse(name: string, id: unknown): string {
    const pending = this.open.get(name) ?? [];
    if (typeof id === 'string' && id !== '') {
      this.open.set(
        name,
        pending.filter((open) => open !== id),
      );
      return id;
    }
    return pending.shift() ?? `call_${this.next++}`;
  }
}

function modelTurn(parts: unknown[], path: string, calls: CallIds): JsonObject[] {
  let text = '';
  const toolCalls: JsonObject[] = [];
  parts.forEach((part: unknown, index) => {
    if (!isObject(part)) throw invalid(`${path}.parts[${index}]: must be an object`, 'contents');
    if (part['thought'] === true) return;
    const call = field(part, 'functionCall');
    if (isObject(call)) {
      const name = nameOf(call, `${path}.parts[${index}].functionCall`);
      const args = call['args'] ?? {};
      toolCalls.push({ id: calls.forCall(name, call['id']), type: 'function', function: { name, arguments: JSON.stringify(args) } });
    } else if (typeof part['text'] === 'string') text += part['text'];
  });
  // A turn of thoughts alone leaves nothing to send.
  if (text === '' && toolCalls.length === 0) return [];
  const message: JsonObject = { role: 'assistant', content: text === '' ? null : text };
  if (toolCalls.length > 0) message['tool_calls'] = toolCalls;
  return [message];
}

function userTurn(parts: unknown[], path: string, calls: CallIds): JsonObject[] {
  const tools: JsonObject[] = [];
  const content: JsonObject[] = [];
  parts.forEach((part: unknown, index) => {
    const at = `${path}.parts[${index}]`;
    if (!isObject(part)) throw invalid(`${at}: must be an object`, 'contents');
    const response = field(part, 'functionResponse');
    if (isObject(response)) {
      const name = nameOf(response, `${at}.functionResponse`);
      const result = response['response'] ?? {};
      tools.push({ role: 'tool', tool_call_id: calls.forResponse(name, response['id']), content: JSON.stringify(result) });
    } else content.push(contentPart(part, at));
  });
  if (content.length === 0) return tools;
  const onlyText = content.every((part) => part['type'] === 'text');
  const user = onlyText ? content.map((part) => part['text'] as string).join('') : content;
  return [...tools, { role: 'user', content: user }];
}

/** One user part as an OpenAI content part: text, image, audio (wav, mp3) or PDF document. */
function contentPart(part: JsonObject, at: string): JsonObject {
  if (typeof part['text'] === 'string') return { type: 'text', text: part['text'] };
  const inline = field(part, 'inlineData');
  if (isObject(inline)) {
    const mimeType = field(inline, 'mimeType');
    const data = inline['data'];
    if (typeof mimeType !== 'string' || typeof data !== 'string') throw invalid(`${at}.inlineData: needs mimeType and data`, 'contents');
    return inlinePart(mimeType, data, at);
  }
  const file = field(part, 'fileData');
  if (isObject(file)) {
    const uri = field(file, 'fileUri');
    const mimeType = field(file, 'mimeType');
    if (typeof uri === 'string' && (typeof mimeType !== 'string' || mimeType.startsWith('image/'))) {
      return { type: 'image_url', image_url: { url: uri } };
    }
    throw invalid(`${at}.fileData: only image URLs are supported`, 'contents');
  }
  throw invalid(`${at}: unsupported part (text, inlineData, fileData, functionCall and functionResponse are)`, 'contents');
}

function inlinePart(mimeType: string, data: string, at: string): JsonObject {
  if (mimeType.startsWith('image/')) return { type: 'image_url', image_url: { url: `data:${mimeType};base64,${data}` } };
  if (mimeType === 'audio/wav' || mimeType === 'audio/x-wav') return { type: 'input_audio', input_audio: { data, format: 'wav' } };
  if (mimeType === 'audio/mp3' || mimeType === 'audio/mpeg') return { type: 'input_audio', input_audio: { data, format: 'mp3' } };
  if (mimeType === 'application/pdf') {
    return { type: 'file', file: { filename: 'document.pdf', file_data: `data:${mimeType};base64,${data}` } };
  }
  throw invalid(`${at}.inlineData: unsupported mimeType '${mimeType}'`, 'contents');
}

function nameOf(object: JsonObject, path: string): string {
  const name = object['name'];
  if (typeof name !== 'string' || name === '') throw invalid(`${path}.name: must be a non-empty string`, 'contents');
  return name;
}
