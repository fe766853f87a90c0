import { invalidRequest, type GatewayError } from '../../errors/gateway-error.ts';
import { systemText, toChatMessages } from './convert-messages.ts';
import { isObject, type JsonObject } from './wire.ts';

/** A Messages request translated for the chat completions pipeline. */
export interface TranslatedRequest {
  /** The chat completions body (OpenAI shape) the gateway runs. */
  chat: JsonObject;
  stream: boolean;
  /**
   * A rough prompt size (characters / 4) for the `message_start` event, which Anthropic
   * sends before any token is counted; `message_delta` carries the upstream's real counts.
   */
  estimatedInputTokens: number;
}

/** Fields read and translated below; everything not listed in either set is forwarded as is. */
const translatedFields = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'stop_sequences',
  'stream',
  'metadata',
  'tools',
  'tool_choice',
  'output_config',
]);

/**
 * Anthropic-only fields a chat upstream cannot honour and that change nothing the client can
 * rely on (ADR field ladder, rule 4): dropped rather than sent to an upstream that would
 * reject them as unknown arguments.
 */
const droppedFields = new Set([
  'top_k',
  'thinking',
  'container',
  'mcp_servers',
  'context_management',
  'service_tier',
  'inference_geo',
  'diagnostics',
  'betas',
  'cache_control',
  'speed',
  'user_profile_id',
  'workspace_id',
]);

/**
 * Anthropic Messages request -> chat completions request. `model` and the gateway's
 * `provider` hint keep their meaning (selectors, virtual models); streaming always asks the
 * upstream for usage so the stream can be metered.
 */
export function toChatRequest(input: unknown): TranslatedRequest {
  const { body, model, maxTokens, stream } = checkMessagesRequest(input);
  const chat: JsonObject = { model };
  const system = systemText(body['system']);
  const messages = toChatMessages(body['messages']);
  chat['messages'] = system === null ? messages : [{ role: 'system', content: system }, ...messages];
  chat['max_tokens'] = maxTokens;
  for (const [field, value] of Object.entries(body)) {
    if (!translatedFields.has(field) && !droppedFields.has(field)) chat[field] = value;
  }
  Object.assign(chat, stopOf(body['stop_sequences']), userOf(body['metadata']), toolsOf(body['tools'], body['tool_choice']));
  Object.assign(chat, formatOf(body['output_config']));
  if (stream) {
    chat['stream'] = true;
    chat['stream_options'] = { include_usage: true };
  }
  return { chat, stream, estimatedInputTokens: estimateTokens(body) };
}

/** The fields the gateway itself relies on in a Messages request (the upstream checks the rest). */
export function checkMessagesRequest(body: unknown): { body: JsonObject; model: string; maxTokens: number; stream: boolean } {
  if (!isObject(body)) throw invalidRequest('request body must be a JSON object', { code: 'invalid_body' });
  const model = body['model'];
  if (model === undefined || model === null || model === '') throw missing('model');
  if (typeof model !== 'string') throw invalid('model: must be a string', 'model');
  const maxTokens = body['max_tokens'];
  if (maxTokens === undefined || maxTokens === null) throw missing('max_tokens');
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw invalid('max_tokens: must be a positive integer', 'max_tokens');
  }
  const stream = body['stream'] ?? false;
  if (typeof stream !== 'boolean') throw invalid('stream: must be a boolean', 'stream');
  return { body, model, maxTokens, stream };
}

function stopOf(stopSequences: unknown): JsonObject {
  if (stopSequences === undefined || stopSequences === null) return {};
  if (!Array.isArray(stopSequences) || !stopSequences.every((item) => typeof item === 'string')) {
    throw invalid('stop_sequences: must be an array of strings', 'stop_sequences');
  }
  return stopSequences.length === 0 ? {} : { stop: stopSequences };
}

/** `metadata.user_id` is OpenAI's end-user identifier, `user`. */
function userOf(metadata: unknown): JsonObject {
  if (metadata === undefined || metadata === null) return {};
  if (!isObject(metadata)) throw invalid('metadata: must be an object', 'metadata');
  const userId = metadata['user_id'];
  return typeof userId === 'string' && userId !== '' ? { user: userId } : {};
}

/**
 * Structured outputs: `output_config.format` (a JSON schema) is OpenAI's `response_format`.
 * `output_config.effort` has no portable equivalent (OpenAI rejects it on non-reasoning
 * models) and is dropped.
 */
function formatOf(outputConfig: unknown): JsonObject {
  if (outputConfig === undefined || outputConfig === null) return {};
  if (!isObject(outputConfig)) throw invalid('output_config: must be an object', 'output_config');
  const format = outputConfig['format'];
  if (format === undefined || format === null) return {};
  if (!isObject(format) || format['type'] !== 'json_schema' || !isObject(format['schema'])) {
    throw invalid('output_config.format: must be {"type": "json_schema", "schema": {...}}', 'output_config.format');
  }
  return { response_format: { type: 'json_schema', json_schema: { name: 'output', schema: format['schema'] } } };
}

/** Custom tools as function tools; `tool_choice` types auto/any/tool/none as OpenAI's choices. */
function toolsOf(tools: unknown, toolChoice: unknown): JsonObject {
  const result: JsonObject = {};
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) throw invalid('tools: must be an array', 'tools');
    if (tools.length > 0) result['tools'] = tools.map((tool: unknown, index) => functionTool(tool, `tools[${index}]`));
  }
  if (toolChoice === undefined || toolChoice === null) return result;
  if (!isObject(toolChoice)) throw invalid('tool_choice: must be an object', 'tool_choice');
  switch (toolChoice['type']) {
    case 'auto':
      result['tool_choice'] = 'auto';
      break;
    case 'any':
      result['tool_choice'] = 'required';
      break;
    case 'none':
      result['tool_choice'] = 'none';
      break;
    case 'tool': {
      const name = toolChoice['name'];
      if (typeof name !== 'string' || name === '') throw invalid('tool_choice.name: must name a tool', 'tool_choice.name');
      result['tool_choice'] = { type: 'function', function: { name } };
      break;
    }
    default:
      throw invalid('tool_choice.type: must be one of auto, any, tool, none', 'tool_choice.type');
  }
  if (toolChoice['disable_parallel_tool_use'] === true && result['tools'] !== undefined && toolChoice['type'] !== 'none') {
    result['parallel_tool_calls'] = false;
  }
  return result;
}

function functionTool(tool: unknown, path: string): JsonObject {
  if (!isObject(tool)) throw invalid(`${path}: must be an object`, path);
  const type = tool['type'];
  if (type !== undefined && type !== null && type !== 'custom') {
    throw invalid(`${path}.type: tool type "${String(type)}" is not supported on this endpoint; only custom tools are`, `${path}.type`);
  }
  const { name, description } = tool;
  if (typeof name !== 'string' || name === '') throw invalid(`${path}.name: must be a non-empty string`, `${path}.name`);
  const schema = tool['input_schema'];
  if (!isObject(schema)) throw invalid(`${path}.input_schema: must be a JSON schema object`, `${path}.input_schema`);
  const fn: JsonObject = { name };
  if (typeof description === 'string') fn['description'] = description;
  fn['parameters'] = schema;
  return { type: 'function', function: fn };
}

/** Characters of everything the model reads, divided by four. */
function estimateTokens(body: JsonObject): number {
  const parts = [body['system'], body['messages'], body['tools']];
  let characters = 0;
  for (const part of parts) {
    if (typeof part === 'string') characters += part.length;
    else if (part !== undefined && part !== null) characters += textLength(part);
  }
  return Math.ceil(characters / 4);
}

/** Lengths of the strings inside a value, skipping base64 image data (not text tokens). */
function textLength(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce((sum: number, item: unknown) => sum + textLength(item), 0);
  if (!isObject(value)) return 0;
  let length = 0;
  for (const [key, item] of Object.entries(value)) {
    if (key === 'data' || key === 'type' || key === 'media_type') continue;
    length += textLength(item);
  }
  return length;
}

function missing(field: string): GatewayError {
  return invalidRequest(`${field}: Field required`, { code: 'missing_field', param: field });
}

function invalid(message: string, param: string): GatewayError {
  return invalidRequest(message, { code: 'invalid_body', param });
}
