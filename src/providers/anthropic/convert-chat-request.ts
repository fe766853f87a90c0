import type { ChatRequestBody } from '../provider.ts';
import { malformed, unsupported } from './convert-content.ts';
import { convertMessages } from './convert-messages.ts';
import { convertToolChoice, convertTools } from './convert-tools.ts';
import { DEFAULT_MAX_TOKENS, isRecord, type MessagesRequest } from './wire.ts';

export interface RequestOptions {
  /** The instance name, used in error messages. */
  provider: string;
  /** `max_tokens` when the client sets none. Default 4096. */
  defaultMaxTokens?: number;
}

/** Anthropic-native request fields a client may send through the common API; carried as they are. */
const nativeFields = ['top_k', 'thinking', 'container', 'context_management', 'mcp_servers'] as const;

/** Thinking budgets for OpenAI's `reasoning_effort` levels (tokens; Anthropic's minimum is 1024). */
const thinkingBudgets: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 5000,
  medium: 10000,
  high: 20000,
  xhigh: 32000,
  max: 32000,
};

/**
 * An OpenAI chat completions request as an Anthropic Messages request. Fields Anthropic has
 * no use for (`n: 1`, `seed`, penalties, `logit_bias`, `store`, `stream_options`, ...) are
 * dropped; fields whose loss would change the answer (`n > 1`, `logprobs`, JSON object mode,
 * unsupported content) are rejected with a 400 that names them.
 */
export function convertChatRequest(body: ChatRequestBody, options: RequestOptions): MessagesRequest {
  const { provider } = options;
  rejectUnsupported(body, provider);
  if (!Array.isArray(body['messages'])) throw malformed('messages must be an array of messages', 'messages');
  const { system, messages } = convertMessages(body['messages'], provider);
  const request: MessagesRequest = { model: body.model, max_tokens: 0, messages };
  if (system !== undefined) request.system = system;
  for (const field of nativeFields)
    if (body[field] !== undefined && body[field] !== null) (request as Record<string, unknown>)[field] = body[field];
  copySampling(body, request);
  const tools = convertTools(body['tools'], provider);
  if (tools.length > 0) request.tools = tools;
  const toolChoice = convertToolChoice(body['tool_choice'], body['parallel_tool_calls'], tools.length > 0, provider);
  if (toolChoice !== undefined) request.tool_choice = toolChoice;
  const user = typeof body['user'] === 'string' && body['user'] !== '' ? body['user'] : body['safety_identifier'];
  if (typeof user === 'string' && user !== '') request.metadata = { user_id: user };
  const format = outputFormat(body['response_format'], provider);
  if (format !== undefined || isRecord(body['output_config'])) {
    request.output_config = { ...(isRecord(body['output_config']) ? body['output_config'] : {}), ...(format ? { format } : {}) };
  }
  if (body['stream'] === true) request.stream = true;
  request.max_tokens = applyReasoning(body, request, options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS);
  return request;
}

function rejectUnsupported(body: ChatRequestBody, provider: string): void {
  const n = body['n'];
  if (n !== undefined && n !== null && n !== 1) throw unsupported('n other than 1', 'n', provider);
  if (body['logprobs'] === true) throw unsupported('logprobs', 'logprobs', provider);
  const audio = body['modalities'];
  if (Array.isArray(audio) && audio.some((modality) => modality !== 'text'))
    throw unsupported('output modalities other than text', 'modalities', provider);
}

function copySampling(body: ChatRequestBody, request: MessagesRequest): void {
  const temperature = body['temperature'];
  // OpenAI's range is 0..2, Anthropic's 0..1: the top of the range maps to Anthropic's top.
  if (typeof temperature === 'number') request.temperature = Math.min(Math.max(temperature, 0), 1);
  if (typeof body['top_p'] === 'number') request.top_p = body['top_p'];
  const stop = body['stop'];
  const sequences = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop.filter((item) => typeof item === 'string') : [];
  if (stop !== undefined && stop !== null && typeof stop !== 'string' && !Array.isArray(stop)) {
    throw malformed('stop must be a string or an array of strings', 'stop');
  }
  if (sequences.length > 0) request.stop_sequences = sequences;
}

/** `response_format`: text is the default (dropped), a JSON schema becomes `output_config.format`. */
function outputFormat(format: unknown, provider: string): Record<string, unknown> | undefined {
  if (format === undefined || format === null) return undefined;
  if (!isRecord(format)) throw malformed('response_format must be an object', 'response_format');
  if (format['type'] === 'text') return undefined;
  if (format['type'] === 'json_schema') {
    const spec = format['json_schema'];
    const schema = isRecord(spec) ? spec['schema'] : undefined;
    if (!isRecord(schema)) throw malformed('response_format.json_schema.schema must be an object', 'response_format.json_schema.schema');
    return { type: 'json_schema', schema };
  }
  throw unsupported(`response_format type ${JSON.stringify(format['type'])}`, 'response_format.type', provider);
}

/**
 * `reasoning_effort` (or `reasoning.effort`) turns on extended thinking with a token budget,
 * unless the client sent Anthropic's `thinking` itself. Thinking needs `max_tokens` above the
 * budget and no sampling changes, so those are adjusted. Returns the `max_tokens` to send.
 */
function applyReasoning(body: ChatRequestBody, request: MessagesRequest, defaultMaxTokens: number): number {
  const explicit = maxTokensOf(body);
  const reasoning = body['reasoning'];
  const effort = body['reasoning_effort'] ?? (isRecord(reasoning) ? reasoning['effort'] : undefined);
  const budget = typeof effort === 'string' ? thinkingBudgets[effort] : undefined;
  if (request.thinking !== undefined || budget === undefined) return explicit ?? defaultMaxTokens;
  request.thinking = { type: 'enabled', budget_tokens: budget };
  delete request.temperature;
  delete request['top_k'];
  if (request.top_p !== undefined && request.top_p < 0.95) delete request.top_p;
  const maxTokens = explicit ?? budget + defaultMaxTokens;
  return maxTokens > budget ? maxTokens : budget + 1024;
}

function maxTokensOf(body: ChatRequestBody): number | undefined {
  for (const field of ['max_completion_tokens', 'max_tokens'] as const) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw malformed(`${field} must be a positive integer`, field);
    return value;
  }
  return undefined;
}
