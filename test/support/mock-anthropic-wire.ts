// Anthropic's Messages API wire format as the mock Anthropic upstream writes it: message
// bodies, SSE event frames, model pages and error bodies, plus the request checks the real
// API makes that matter to a translating gateway (required fields, no unknown fields).

export const MOCK_ANTHROPIC_CONTENT = 'Hello from mock';
export const MOCK_INPUT_TOKENS = 12;
/** output_tokens of answers and tool calls; a text stream reports its chunk count. */
export const MOCK_OUTPUT_TOKENS = 5;
export const MOCK_TOOL_INPUT = { city: 'Paris' };

export interface MockUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

export interface AnswerSpec {
  model: string;
  counter: number;
  usage: MockUsage;
  /** Set when the answer is a tool call. */
  toolUse: { name: string; input: Record<string, unknown> } | undefined;
  chunkCount: number;
  /** A mid-stream error event after this many text deltas. */
  streamError?: { afterChunks: number; type: string; message: string };
}

/** The fields the Messages API accepts; anything else is rejected as it is upstream. */
const knownFields = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'stream',
  'tools',
  'tool_choice',
  'metadata',
  'thinking',
  'output_config',
  'service_tier',
  'container',
  'context_management',
  'mcp_servers',
  'inference_geo',
]);

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export function errorTypeOf(status: number): string {
  return errorTypes[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** Anthropic's error body: `{"type":"error","error":{"type","message"},"request_id"}`. */
export function anthropicErrorJson(status: number, message = `mock anthropic error ${status}`, type = errorTypeOf(status)): string {
  return JSON.stringify({ type: 'error', error: { type, message }, request_id: `req_mock_${status}` });
}

/** What the real API would reject in a Messages request body, or null when it is acceptable. */
export function messagesRequestProblem(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'request body must be a JSON object';
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) if (!knownFields.has(key)) return `${key}: Extra inputs are not permitted`;
  if (typeof fields['model'] !== 'string' || fields['model'] === '') return 'model: Field required';
  if (typeof fields['max_tokens'] !== 'number' || !Number.isInteger(fields['max_tokens'])) return 'max_tokens: Field required';
  if (!Array.isArray(fields['messages'])) return 'messages: Field required';
  for (const [index, message] of (fields['messages'] as unknown[]).entries()) {
    const role = (message as { role?: unknown } | null)?.role;
    if (role !== 'user' && role !== 'assistant') return `messages.${index}.role: Input should be 'user' or 'assistant'`;
  }
  return null;
}

function toolUseBlock(spec: AnswerSpec): Record<string, unknown> {
  return { type: 'tool_use', id: `toolu_mock_${spec.counter}`, name: spec.toolUse?.name, input: spec.toolUse?.input ?? {} };
}

export function messageJson(spec: AnswerSpec): string {
  const content = spec.toolUse === undefined ? [{ type: 'text', text: MOCK_ANTHROPIC_CONTENT }] : [toolUseBlock(spec)];
  return JSON.stringify({
    id: `msg_mock_${spec.counter}`,
    type: 'message',
    role: 'assistant',
    model: spec.model,
    content,
    stop_reason: spec.toolUse === undefined ? 'end_turn' : 'tool_use',
    stop_sequence: null,
    usage: { ...spec.usage, output_tokens: MOCK_OUTPUT_TOKENS },
  });
}

function frame(data: Record<string, unknown>): string {
  return `event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Deltas of a streamed tool input: the JSON text in `pieces` parts, after an empty one as Anthropic sends. */
function inputDeltas(input: Record<string, unknown>, pieces: number): string[] {
  const text = JSON.stringify(input);
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, pieces)));
  const parts = [''];
  for (let start = 0; start < text.length; start += size) parts.push(text.slice(start, start + size));
  return parts;
}

/** Every SSE frame of a streamed answer, message_stop included (or cut by an error event). */
export function streamEvents(spec: AnswerSpec): string[] {
  const message = { id: `msg_mock_${spec.counter}`, type: 'message', role: 'assistant', model: spec.model, content: [] };
  const start = { ...message, stop_reason: null, stop_sequence: null, usage: { ...spec.usage, output_tokens: 1 } };
  const frames = [frame({ type: 'message_start', message: start })];
  if (spec.toolUse === undefined) {
    frames.push(frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }), frame({ type: 'ping' }));
    for (let index = 0; index < spec.chunkCount; index += 1) {
      if (spec.streamError !== undefined && index === spec.streamError.afterChunks) {
        frames.push(frame({ type: 'error', error: { type: spec.streamError.type, message: spec.streamError.message } }));
        return frames;
      }
      frames.push(frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `tok${index} ` } }));
    }
  } else {
    const block = { ...toolUseBlock(spec), input: {} };
    frames.push(frame({ type: 'content_block_start', index: 0, content_block: block }));
    for (const partial of inputDeltas(spec.toolUse.input, spec.chunkCount)) {
      frames.push(frame({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: partial } }));
    }
  }
  const outputTokens = spec.toolUse === undefined ? spec.chunkCount : MOCK_OUTPUT_TOKENS;
  const stopReason = spec.toolUse === undefined ? 'end_turn' : 'tool_use';
  frames.push(
    frame({ type: 'content_block_stop', index: 0 }),
    frame({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } }),
    frame({ type: 'message_stop' }),
  );
  return frames;
}

/** A stream whose very first event is an error (the API does this when overloaded). */
export function leadingErrorEvents(type: string, message: string): string[] {
  return [frame({ type: 'error', error: { type, message } })];
}

/** One page of `GET /v1/models` (`limit`, `after_id`), newest first as Anthropic lists them. */
export function modelPageJson(models: readonly string[], limit: number, afterId: string | null): string {
  const startIndex = afterId === null ? 0 : models.indexOf(afterId) + 1;
  const page = models.slice(startIndex, startIndex + limit);
  const data = page.map((id, index) => ({
    type: 'model',
    id,
    display_name: id,
    created_at: new Date(Date.UTC(2025, 0, 1) - (startIndex + index) * 86_400_000).toISOString(),
  }));
  const hasMore = startIndex + limit < models.length;
  return JSON.stringify({ data, has_more: hasMore, first_id: page[0] ?? null, last_id: page.at(-1) ?? null });
}
