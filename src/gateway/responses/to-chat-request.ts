import { invalidRequest } from '../../errors/gateway-error.ts';
import type { ChatRequestBody } from '../../providers/provider.ts';
import { inputToMessages, unsupported } from './convert-input.ts';

type Fields = Record<string, unknown>;

const isRecord = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Responses fields that chat has no place for and whose absence changes nothing the client
 * can rely on (`store` is honoured by the pipeline, which keeps the response): dropped. Fields not named anywhere here are
 * forwarded untouched (vendor extras such as `seed` or `top_k`).
 */
const dropped = new Set([
  'provider',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'max_output_tokens',
  'text',
  'reasoning',
  'stream',
  'stream_options',
  'store',
  'metadata',
  'include',
  'truncation',
  'top_logprobs',
  'max_tool_calls',
  'context_management',
  'moderation',
  'background',
  'previous_response_id',
  'conversation',
  'prompt',
]);

/**
 * Fields that need state or features only OpenAI's Responses API has. The pipeline resolves
 * `previous_response_id` (and `item_reference` items) against the gateway's own store before
 * it translates (gateway/endpoints/responses.ts), so a request reaching here with one is a bug or a
 * `conversation`/`prompt` that chat cannot carry.
 */
const statefulFields = ['previous_response_id', 'conversation', 'prompt'];

/**
 * A Responses request (its stored state already resolved into `input`) -> the chat
 * completions request that does the same work on a provider without a Responses API. Pure;
 * `provider` only names the instance in errors.
 */
export function toChatRequest(request: Fields, model: string, provider: string): ChatRequestBody {
  for (const field of statefulFields) {
    if (request[field] !== undefined && request[field] !== null) throw unsupported(`\`${field}\``, field, provider);
  }
  if (request['background'] === true) throw unsupported('`background`', 'background', provider);
  const chat: ChatRequestBody = { model, messages: inputToMessages(request['instructions'], request['input'], provider) };
  for (const [field, value] of Object.entries(request)) {
    if (!dropped.has(field) && field !== 'model') chat[field] = value;
  }
  if (request['tools'] !== undefined && request['tools'] !== null) chat['tools'] = toolsOf(request['tools'], provider);
  if (request['tool_choice'] !== undefined && request['tool_choice'] !== null)
    chat['tool_choice'] = toolChoiceOf(request['tool_choice'], provider);
  // OpenAI refuses `parallel_tool_calls` without tools; it means nothing then.
  if (chat['tools'] === undefined) delete chat['parallel_tool_calls'];
  const maxOutputTokens = request['max_output_tokens'];
  if (maxOutputTokens !== undefined && maxOutputTokens !== null) chat['max_tokens'] = maxOutputTokens;
  const responseFormat = responseFormatOf(request['text'], provider);
  if (responseFormat !== null) chat['response_format'] = responseFormat;
  const effort = isRecord(request['reasoning']) ? request['reasoning']['effort'] : undefined;
  if (typeof effort === 'string') chat['reasoning_effort'] = effort;
  if (request['stream'] === true) {
    chat['stream'] = true;
    // Always asked for: the gateway meters streams from the final usage chunk.
    chat['stream_options'] = { include_usage: true };
  }
  return chat;
}

/** Function tools become chat tools; OpenAI's built-in tools (web search, files, ...) cannot. */
function toolsOf(tools: unknown, provider: string): Fields[] {
  if (!Array.isArray(tools)) throw invalidRequest('tools must be an array', { code: 'invalid_body', param: 'tools' });
  return tools.map((tool) => {
    if (!isRecord(tool)) throw invalidRequest('each tool must be an object', { code: 'invalid_body', param: 'tools' });
    if (tool['type'] !== 'function') throw unsupported(`tool type ${JSON.stringify(tool['type'] ?? null)}`, 'tools', provider);
    if (typeof tool['name'] !== 'string') throw invalidRequest('a function tool needs a name', { code: 'invalid_body', param: 'tools' });
    const fn: Fields = { name: tool['name'] };
    for (const field of ['description', 'parameters', 'strict']) {
      if (tool[field] !== undefined && tool[field] !== null) fn[field] = tool[field];
    }
    return { type: 'function', function: fn };
  });
}

function toolChoiceOf(choice: unknown, provider: string): unknown {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (isRecord(choice) && choice['type'] === 'function' && typeof choice['name'] === 'string') {
    return { type: 'function', function: { name: choice['name'] } };
  }
  throw unsupported(`tool_choice ${JSON.stringify(choice)}`, 'tool_choice', provider);
}

/** `text.format` -> `response_format`; plain text needs none. */
function responseFormatOf(text: unknown, provider: string): Fields | null {
  if (!isRecord(text) || !isRecord(text['format'])) return null;
  const format = text['format'];
  switch (format['type']) {
    case 'text':
      return null;
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const schema: Fields = { name: format['name'] ?? 'response', schema: format['schema'] };
      if (format['description'] !== undefined) schema['description'] = format['description'];
      if (format['strict'] !== undefined && format['strict'] !== null) schema['strict'] = format['strict'];
      return { type: 'json_schema', json_schema: schema };
    }
    default:
      throw unsupported(`text.format type ${JSON.stringify(format['type'] ?? null)}`, 'text', provider);
  }
}
