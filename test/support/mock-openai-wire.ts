// OpenAI wire format as the mock upstream writes it: chat.completion bodies, SSE chunk
// frames and error bodies, serialised with templates (the benchmark runs through here).

export const MOCK_CONTENT = 'Hello from mock';
export const MOCK_PROMPT_TOKENS = 12;
/** completion_tokens of answers and tool calls; a content stream reports its chunk count. */
export const MOCK_COMPLETION_TOKENS = 5;

export interface ChatRequest {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  /** Function name of the request's first tool, when it has `tools`. */
  firstToolName: string | undefined;
}

export interface ToolCallSpec {
  name: string;
  arguments: string;
}

export interface StreamSpec {
  chat: ChatRequest;
  counter: number;
  chunkCount: number;
  toolCall: ToolCallSpec | undefined;
}

const MESSAGE_JSON = JSON.stringify({ role: 'assistant', content: MOCK_CONTENT });
/** OpenAI's error `type` and `code` by status, as "type code". */
const ERROR_SHAPES: Record<number, string> = {
  400: 'invalid_request_error invalid_request',
  401: 'invalid_request_error invalid_api_key',
  403: 'invalid_request_error permission_denied',
  404: 'invalid_request_error model_not_found',
  429: 'requests rate_limit_exceeded',
  503: 'server_error service_unavailable',
};

export function errorJson(status: number, message = `mock upstream error ${status}`): string {
  const fallback = status >= 500 ? 'server_error server_error' : 'invalid_request_error invalid_request';
  const [type, code] = (ERROR_SHAPES[status] ?? fallback).split(' ');
  return JSON.stringify({ error: { message, type, param: null, code } });
}

const usageCache = new Map<number, string>();

function usageJson(completionTokens: number): string {
  let usage = usageCache.get(completionTokens);
  if (usage === undefined) {
    const total = MOCK_PROMPT_TOKENS + completionTokens;
    usage =
      `{"prompt_tokens":${MOCK_PROMPT_TOKENS},"completion_tokens":${completionTokens},` +
      `"total_tokens":${total},"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
      '"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,' +
      '"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}';
    usageCache.set(completionTokens, usage);
  }
  return usage;
}

/** The fields the mock acts on, or undefined when the body is not an object with a string model. */
export function readChatRequest(body: unknown): ChatRequest | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const fields = body as Record<string, unknown>;
  if (typeof fields.model !== 'string') return undefined;
  const streamOptions = fields.stream_options as { include_usage?: unknown } | null | undefined;
  let firstToolName: string | undefined;
  if (Array.isArray(fields.tools) && fields.tools.length > 0) {
    const tool = fields.tools[0] as { function?: { name?: unknown } } | null | undefined;
    const name = tool?.function?.name;
    firstToolName = typeof name === 'string' ? name : 'tool';
  }
  const includeUsage = streamOptions?.include_usage === true;
  return { model: fields.model, stream: fields.stream === true, includeUsage, firstToolName };
}

function toolCallObject(toolCall: ToolCallSpec, counter: number, args: string): object {
  const call = { name: toolCall.name, arguments: args };
  return { id: `call_mock_${counter}`, type: 'function', function: call };
}

export function completionJson(chat: ChatRequest, counter: number, toolCall?: ToolCallSpec): string {
  let message = MESSAGE_JSON;
  let finishReason = 'stop';
  if (toolCall !== undefined) {
    const call = toolCallObject(toolCall, counter, toolCall.arguments);
    message = JSON.stringify({ role: 'assistant', content: null, tool_calls: [call] });
    finishReason = 'tool_calls';
  }
  const created = Math.floor(Date.now() / 1000);
  return (
    `{"id":"chatcmpl-mock-${counter}","object":"chat.completion","created":${created},` +
    `"model":${JSON.stringify(chat.model)},"system_fingerprint":"fp_mock","choices":[{"index":0,` +
    `"message":${message},"logprobs":null,"finish_reason":"${finishReason}"}],` +
    `"usage":${usageJson(MOCK_COMPLETION_TOKENS)}}`
  );
}

/** Delta frames of a streamed tool call: the call with empty arguments, then argument pieces. */
function toolCallDeltas(toolCall: ToolCallSpec, counter: number, pieces: number): string[] {
  const call = { index: 0, ...toolCallObject(toolCall, counter, '') };
  const deltas = [JSON.stringify({ role: 'assistant', content: null, tool_calls: [call] })];
  const text = toolCall.arguments;
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, pieces)));
  for (let start = 0; start < text.length; start += size) {
    const piece = { index: 0, function: { arguments: text.slice(start, start + size) } };
    deltas.push(JSON.stringify({ tool_calls: [piece] }));
  }
  return deltas;
}

/** Every SSE frame of a streamed answer, `data: [DONE]` included. */
export function streamFrames(spec: StreamSpec): string[] {
  const { chat, counter, chunkCount, toolCall } = spec;
  const created = Math.floor(Date.now() / 1000);
  const head =
    `data: {"id":"chatcmpl-mock-${counter}","object":"chat.completion.chunk","created":${created},` +
    `"model":${JSON.stringify(chat.model)},"system_fingerprint":"fp_mock",`;
  const tail = chat.includeUsage ? ',"usage":null}\n\n' : '}\n\n';
  const frame = (delta: string, finishReason = 'null'): string =>
    `${head}"choices":[{"index":0,"delta":${delta},"logprobs":null,` + `"finish_reason":${finishReason}}]${tail}`;
  let deltas: string[];
  let completionTokens = MOCK_COMPLETION_TOKENS;
  if (toolCall === undefined) {
    deltas = ['{"role":"assistant","content":""}'];
    for (let index = 0; index < chunkCount; index += 1) deltas.push(`{"content":"tok${index} "}`);
    completionTokens = chunkCount;
  } else {
    deltas = toolCallDeltas(toolCall, counter, chunkCount);
  }
  const frames = deltas.map((delta) => frame(delta));
  frames.push(frame('{}', toolCall === undefined ? '"stop"' : '"tool_calls"'));
  if (chat.includeUsage) {
    frames.push(`${head}"choices":[],"usage":${usageJson(completionTokens)}}\n\n`);
  }
  frames.push('data: [DONE]\n\n');
  return frames;
}
