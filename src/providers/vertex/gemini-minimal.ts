import { isJsonObject as isRecord } from '../../core/json.ts';
import { invalidRequest, providerError } from '../../errors/gateway-error.ts';
import type { SseEvent } from '../../streaming/sse-parser.ts';
import type { ChatRequestBody } from '../provider.ts';
import { GeminiMinimalStream } from './gemini-minimal-stream.ts';

// A deliberately small OpenAI chat <-> Gemini generateContent converter (text, system, data-URL
// images, function tools and results, usage, finish reasons) behind the GeminiConverters
// interface; the full native converters of src/providers/gemini/ replace it at merge.

export interface GeminiResponseOptions {
  provider: string;
  /** Unix seconds stamped as `created`. */
  created: number;
  /** The model asked for, used until the upstream names its own (`modelVersion`). */
  model: string;
}

export interface GeminiStreamOptions extends GeminiResponseOptions {
  /** End with OpenAI's usage chunk, as `stream_options.include_usage` asks. */
  includeUsage: boolean;
}

/** Turns `streamGenerateContent?alt=sse` events into OpenAI chunk frames; `finish` at the body's end. */
export interface GeminiStreamTranslator {
  push(events: readonly SseEvent[]): string;
  finish(): string;
}

/** What the Vertex adapter needs to speak Gemini: request out, answer and stream back. */
export interface GeminiConverters {
  toGenerateContent(chat: ChatRequestBody, provider: string): Record<string, unknown>;
  fromGenerateContent(json: string, options: GeminiResponseOptions): Record<string, unknown>;
  streamTranslator(options: GeminiStreamOptions): GeminiStreamTranslator;
}

export const minimalGeminiConverters: GeminiConverters = {
  toGenerateContent,
  fromGenerateContent,
  streamTranslator: (options) => new GeminiMinimalStream(options),
};

type Part = Record<string, unknown>;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

export function toGenerateContent(chat: ChatRequestBody, provider: string): Record<string, unknown> {
  const messages = chat['messages'];
  if (!Array.isArray(messages)) throw invalidRequest('messages must be an array of messages', { param: 'messages' });
  const system: Part[] = [];
  const contents: Content[] = [];
  const toolNames = new Map<string, string>();
  for (const [index, message] of messages.entries()) {
    if (!isRecord(message)) throw invalidRequest('each message must be an object', { param: `messages[${index}]` });
    const role = message['role'];
    if (role === 'system' || role === 'developer') system.push(...partsOf(message['content'], index, provider));
    else if (role === 'assistant') append(contents, 'model', assistantParts(message, index, provider, toolNames));
    else if (role === 'tool') append(contents, 'user', [toolResultPart(message, toolNames)]);
    else append(contents, 'user', partsOf(message['content'], index, provider));
  }
  const request: Record<string, unknown> = { contents };
  if (system.length > 0) request['systemInstruction'] = { parts: system };
  const tools = functionDeclarations(chat['tools']);
  if (tools.length > 0) request['tools'] = [{ functionDeclarations: tools }];
  const toolConfig = toolConfigOf(chat['tool_choice']);
  if (toolConfig !== null) request['toolConfig'] = toolConfig;
  const generationConfig = generationConfigOf(chat);
  if (Object.keys(generationConfig).length > 0) request['generationConfig'] = generationConfig;
  return request;
}

/** Gemini wants turns of one role merged (several function responses answer one model turn). */
function append(contents: Content[], role: Content['role'], parts: Part[]): void {
  const last = contents.at(-1);
  if (last?.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function partsOf(content: unknown, index: number, provider: string): Part[] {
  if (typeof content === 'string') return [{ text: content }];
  if (content === null || content === undefined) return [];
  if (!Array.isArray(content))
    throw invalidRequest('content must be a string or an array of parts', { param: `messages[${index}].content` });
  return content.map((part): Part => {
    if (isRecord(part) && part['type'] === 'text' && typeof part['text'] === 'string') return { text: part['text'] };
    const url = isRecord(part) && isRecord(part['image_url']) ? part['image_url']['url'] : undefined;
    const match = typeof url === 'string' ? /^data:([^;,]+);base64,(.*)$/s.exec(url) : null;
    if (match !== null) return { inlineData: { mimeType: match[1], data: match[2] } };
    throw invalidRequest(`provider ${provider} takes text and base64 data-URL images only`, {
      param: `messages[${index}].content`,
      code: 'unsupported_parameter',
    });
  });
}

function assistantParts(message: Record<string, unknown>, index: number, provider: string, toolNames: Map<string, string>): Part[] {
  const parts = partsOf(message['content'], index, provider);
  const calls = Array.isArray(message['tool_calls']) ? message['tool_calls'] : [];
  for (const call of calls) {
    if (!isRecord(call) || !isRecord(call['function'])) continue;
    const name = String(call['function']['name'] ?? '');
    if (typeof call['id'] === 'string') toolNames.set(call['id'], name);
    parts.push({ functionCall: { name, args: parseArguments(call['function']['arguments']) } });
  }
  return parts;
}

function parseArguments(text: unknown): Record<string, unknown> {
  try {
    const parsed: unknown = typeof text === 'string' && text !== '' ? JSON.parse(text) : {};
    return isRecord(parsed) ? parsed : { value: parsed };
  } catch {
    return {};
  }
}

function toolResultPart(message: Record<string, unknown>, toolNames: Map<string, string>): Part {
  const id = typeof message['tool_call_id'] === 'string' ? message['tool_call_id'] : '';
  const content = message['content'];
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((part) => (isRecord(part) ? String(part['text'] ?? '') : '')).join('')
        : '';
  return { functionResponse: { name: toolNames.get(id) ?? id, response: { content: text } } };
}

function functionDeclarations(tools: unknown): Record<string, unknown>[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool) => {
    if (!isRecord(tool) || tool['type'] !== 'function' || !isRecord(tool['function'])) return [];
    const { name, description, parameters } = tool['function'];
    return [{ name, ...(description === undefined ? {} : { description }), ...(parameters === undefined ? {} : { parameters }) }];
  });
}

function toolConfigOf(choice: unknown): Record<string, unknown> | null {
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (isRecord(choice) && isRecord(choice['function'])) {
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice['function']['name']] } };
  }
  return null;
}

function generationConfigOf(chat: ChatRequestBody): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  const copy = (from: string, to: string): void => {
    if (typeof chat[from] === 'number') config[to] = chat[from];
  };
  copy('temperature', 'temperature');
  copy('top_p', 'topP');
  copy('max_tokens', 'maxOutputTokens');
  copy('max_completion_tokens', 'maxOutputTokens');
  copy('n', 'candidateCount');
  copy('seed', 'seed');
  copy('presence_penalty', 'presencePenalty');
  copy('frequency_penalty', 'frequencyPenalty');
  const stop = chat['stop'];
  if (typeof stop === 'string') config['stopSequences'] = [stop];
  else if (Array.isArray(stop)) config['stopSequences'] = stop;
  const format = chat['response_format'];
  if (isRecord(format) && (format['type'] === 'json_object' || format['type'] === 'json_schema')) {
    config['responseMimeType'] = 'application/json';
    const schema = isRecord(format['json_schema']) ? format['json_schema']['schema'] : undefined;
    if (schema !== undefined) config['responseJsonSchema'] = schema;
  }
  return config;
}

/** Gemini's finish reasons as OpenAI's; tool calls win, as OpenAI reports them. */
export function finishReasonOf(reason: unknown, calledTools: boolean): string | null {
  if (reason === undefined || reason === null || reason === 'FINISH_REASON_UNSPECIFIED') return null;
  if (calledTools) return 'tool_calls';
  if (reason === 'STOP') return 'stop';
  if (reason === 'MAX_TOKENS') return 'length';
  if (['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY'].includes(String(reason))) return 'content_filter';
  return 'stop';
}

/** `usageMetadata` as OpenAI's usage (thinking tokens count as completion tokens, as Google bills them). */
export function usageOf(metadata: unknown): Record<string, unknown> {
  const usage = isRecord(metadata) ? metadata : {};
  const count = (key: string): number => (typeof usage[key] === 'number' ? usage[key] : 0);
  const prompt = count('promptTokenCount');
  const completion = count('candidatesTokenCount') + count('thoughtsTokenCount');
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: count('totalTokenCount') || prompt + completion,
    prompt_tokens_details: { cached_tokens: count('cachedContentTokenCount') },
    completion_tokens_details: { reasoning_tokens: count('thoughtsTokenCount') },
  };
}

/** One candidate's parts as an OpenAI message (`content`, `reasoning_content`, `tool_calls`). */
export function messageOf(candidate: Record<string, unknown>, firstCall = 0): { message: Record<string, unknown>; calls: number } {
  const parts = isRecord(candidate['content']) && Array.isArray(candidate['content']['parts']) ? candidate['content']['parts'] : [];
  let text = '';
  let reasoning = '';
  const calls: Record<string, unknown>[] = [];
  for (const part of parts) {
    if (!isRecord(part)) continue;
    if (typeof part['text'] === 'string') {
      if (part['thought'] === true) reasoning += part['text'];
      else text += part['text'];
    }
    if (isRecord(part['functionCall'])) {
      const call = part['functionCall'];
      const id = typeof call['id'] === 'string' ? call['id'] : `call_${firstCall + calls.length}`;
      calls.push({ id, type: 'function', function: { name: call['name'], arguments: JSON.stringify(call['args'] ?? {}) } });
    }
  }
  const message: Record<string, unknown> = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (reasoning !== '') message['reasoning_content'] = reasoning;
  if (calls.length > 0) message['tool_calls'] = calls;
  return { message, calls: calls.length };
}

export function fromGenerateContent(json: string, options: GeminiResponseOptions): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    parsed = null;
  }
  if (!isRecord(parsed)) {
    throw providerError(`upstream ${options.provider} returned an unreadable answer`, {
      provider: options.provider,
      code: 'invalid_upstream_response',
    });
  }
  const candidates = Array.isArray(parsed['candidates']) ? parsed['candidates'].filter(isRecord) : [];
  const choices = candidates.map((candidate, position) => {
    const { message, calls } = messageOf(candidate);
    const index = typeof candidate['index'] === 'number' ? candidate['index'] : position;
    return { index, message, logprobs: null, finish_reason: finishReasonOf(candidate['finishReason'], calls > 0) ?? 'stop' };
  });
  if (choices.length === 0) {
    // A prompt blocked by safety filters has no candidate, only promptFeedback.blockReason.
    choices.push({ index: 0, message: { role: 'assistant', content: '' }, logprobs: null, finish_reason: 'content_filter' });
  }
  return {
    id: typeof parsed['responseId'] === 'string' ? `chatcmpl-${parsed['responseId']}` : `chatcmpl-${options.created}`,
    object: 'chat.completion',
    created: options.created,
    model: typeof parsed['modelVersion'] === 'string' ? parsed['modelVersion'] : options.model,
    choices,
    usage: usageOf(parsed['usageMetadata']),
  };
}
