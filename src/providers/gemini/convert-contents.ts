import { invalidRequest, type GatewayError } from '../../errors/gateway-error.ts';
import { isRecord, text, type GeminiContent, type GeminiPart, type Json } from './wire.ts';

/** Where Google's OpenAI-compatible API carries a tool call's thought signature (kept for round trips). */
export function thoughtSignatureOf(toolCall: Json): string | undefined {
  const extra = isRecord(toolCall['extra_content']) ? toolCall['extra_content'] : {};
  const google = isRecord(extra['google']) ? extra['google'] : {};
  return text(google['thought_signature']);
}

const badMessage = (message: string, param: string): GatewayError => invalidRequest(message, { param, code: 'invalid_body' });

export interface ConvertedMessages {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiPart[] };
}

/**
 * OpenAI chat messages as Gemini contents: system/developer messages become the system
 * instruction, assistant turns role `model` (text and `functionCall` parts), tool results
 * `functionResponse` parts named after the call they answer (matched by `tool_call_id`);
 * consecutive tool results share one user turn, as Gemini expects for parallel calls.
 */
export function convertMessages(messages: unknown): ConvertedMessages {
  if (!Array.isArray(messages)) throw badMessage('messages must be an array', 'messages');
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  const callNames = new Map<string, string>();
  messages.forEach((message: unknown, index) => {
    const param = `messages[${index}]`;
    if (!isRecord(message)) throw badMessage(`${param} must be an object`, param);
    const role = message['role'];
    if (role === 'system' || role === 'developer') system.push(...partsOf(message['content'], `${param}.content`));
    else if (role === 'user') push(contents, 'user', partsOf(message['content'], `${param}.content`));
    else if (role === 'assistant') push(contents, 'model', assistantParts(message, param, callNames));
    else if (role === 'tool' || role === 'function') push(contents, 'user', [toolResultPart(message, param, callNames)]);
    else throw badMessage(`${param}.role ${JSON.stringify(role)} is not supported`, `${param}.role`);
  });
  return system.length > 0 ? { contents, systemInstruction: { parts: system } } : { contents };
}

/**
 * Appends a turn; a tool result right after another joins its turn. An assistant turn with
 * nothing in it (empty content, no tool call) is left out: Gemini refuses empty text parts.
 */
function push(contents: GeminiContent[], role: GeminiContent['role'], parts: GeminiPart[]): void {
  if (role === 'model' && parts.every((part) => part.text === '')) return;
  const last = contents.at(-1);
  const joinable = (part: GeminiPart): boolean => part.functionResponse !== undefined;
  if (last !== undefined && last.role === role && parts.every(joinable) && last.parts.every(joinable)) {
    last.parts.push(...parts);
    return;
  }
  contents.push({ role, parts: parts.length > 0 ? parts : [{ text: '' }] });
}

function assistantParts(message: Json, param: string, callNames: Map<string, string>): GeminiPart[] {
  const parts = message['content'] === null || message['content'] === undefined ? [] : partsOf(message['content'], `${param}.content`);
  const toolCalls = message['tool_calls'];
  if (!Array.isArray(toolCalls)) return parts;
  toolCalls.forEach((call: unknown, index) => {
    const at = `${param}.tool_calls[${index}]`;
    const fn = isRecord(call) && isRecord(call['function']) ? call['function'] : null;
    const name = text(fn?.['name']);
    if (!isRecord(call) || fn === null || name === undefined) throw badMessage(`${at} needs a function name`, at);
    const id = text(call['id']);
    if (id !== undefined) callNames.set(id, name);
    const part: GeminiPart = { functionCall: { name, args: argumentsOf(fn['arguments'], `${at}.function.arguments`) } };
    const signature = thoughtSignatureOf(call);
    if (signature !== undefined) part.thoughtSignature = signature;
    parts.push(part);
  });
  return parts;
}

function argumentsOf(value: unknown, param: string): Json {
  if (isRecord(value)) return value;
  if (value === undefined || value === null || value === '') return {};
  try {
    const parsed: unknown = JSON.parse(String(value));
    if (isRecord(parsed)) return parsed;
  } catch {
    // reported below
  }
  throw badMessage(`${param} must be a JSON object`, param);
}

/** A tool message as `functionResponse`: a JSON object result as it is, anything else as `{result}`. */
function toolResultPart(message: Json, param: string, callNames: Map<string, string>): GeminiPart {
  const id = text(message['tool_call_id']);
  const name = (id === undefined ? undefined : callNames.get(id)) ?? text(message['name']);
  if (name === undefined) throw badMessage(`${param}.tool_call_id matches no earlier tool call`, `${param}.tool_call_id`);
  const content = message['content'];
  const joined =
    typeof content === 'string'
      ? content
      : partsOf(content, `${param}.content`)
          .map((part) => part.text ?? '')
          .join('');
  let parsed: unknown;
  try {
    parsed = JSON.parse(joined);
  } catch {
    parsed = undefined;
  }
  return { functionResponse: { name, response: isRecord(parsed) ? parsed : { result: parsed ?? joined } } };
}

/** Message content (a string or OpenAI content parts) as Gemini parts. */
export function partsOf(content: unknown, param: string): GeminiPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (content === null || content === undefined) return [];
  if (!Array.isArray(content)) throw badMessage(`${param} must be a string or an array of parts`, param);
  return content.map((part: unknown, index) => partOf(part, `${param}[${index}]`));
}

function partOf(part: unknown, param: string): GeminiPart {
  if (!isRecord(part)) throw badMessage(`${param} must be an object`, param);
  switch (part['type']) {
    case 'text':
      return { text: text(part['text']) ?? '' };
    case 'image_url': {
      const image = part['image_url'];
      const url = isRecord(image) ? text(image['url']) : text(image);
      if (url === undefined) throw badMessage(`${param}.image_url.url is required`, `${param}.image_url`);
      return mediaPart(url, param);
    }
    case 'input_audio': {
      const audio = isRecord(part['input_audio']) ? part['input_audio'] : {};
      const data = text(audio['data']);
      if (data === undefined) throw badMessage(`${param}.input_audio.data is required`, `${param}.input_audio`);
      return { inlineData: { mimeType: `audio/${text(audio['format']) ?? 'wav'}`, data } };
    }
    case 'file': {
      const file = isRecord(part['file']) ? part['file'] : {};
      const data = text(file['file_data']);
      if (data === undefined) throw badMessage(`${param}.file.file_data is required (file ids are not supported)`, `${param}.file`);
      return mediaPart(data, param);
    }
    default:
      throw invalidRequest(`${param}.type ${JSON.stringify(part['type'])} is not supported by Gemini`, {
        param: `${param}.type`,
        code: 'unsupported_parameter',
      });
  }
}

const extensionTypes: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  pdf: 'application/pdf',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

/** A `data:` URL as `inlineData` (base64); any other URL as `fileData` with a MIME type guessed from its extension. */
function mediaPart(url: string, param: string): GeminiPart {
  if (url.startsWith('data:')) {
    const match = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
    if (match === null) throw badMessage(`${param}: a data URL must be base64-encoded`, param);
    return { inlineData: { mimeType: match[1] ?? 'application/octet-stream', data: match[2] ?? '' } };
  }
  const extension = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  const mimeType = extension === undefined ? undefined : extensionTypes[extension];
  return { fileData: mimeType === undefined ? { fileUri: url } : { mimeType, fileUri: url } };
}
