import type { ServerResponse } from 'node:http';
import type { MockRequest } from './mock-upstream.ts';

// A scripted tool-using model for agent-loop tests, in both wire formats (OpenAI chat
// completions and Anthropic Messages), JSON and SSE. With tools and no tool result yet, it
// writes text BEFORE its tool call (AGENT_PREAMBLE, then get_weather {"city":"Paris"});
// once the last message is a tool result it answers AGENT_FINAL; without tools, AGENT_PLAIN.

export const AGENT_PREAMBLE = 'Let me check the weather.';
export const AGENT_FINAL = 'It is sunny in Paris.';
export const AGENT_PLAIN = 'Hello from the agent mock';
export const AGENT_ARGUMENTS = '{"city":"Paris"}';

type Fields = Record<string, unknown>;
type Turn = { kind: 'text'; text: string } | { kind: 'tool'; text: string; callId: string };

const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
let counter = 0;

function bodyOf(request: MockRequest): Fields {
  return typeof request.body === 'object' && request.body !== null ? (request.body as Fields) : {};
}

function turnOf(body: Fields, lastIsToolResult: (message: Fields) => boolean, callPrefix: string): Turn {
  counter += 1;
  const messages = Array.isArray(body['messages']) ? (body['messages'] as Fields[]) : [];
  const last = messages.at(-1) ?? {};
  if (!Array.isArray(body['tools']) || body['tools'].length === 0) return { kind: 'text', text: AGENT_PLAIN };
  if (lastIsToolResult(last)) return { kind: 'text', text: AGENT_FINAL };
  return { kind: 'tool', text: AGENT_PREAMBLE, callId: `${callPrefix}${counter}` };
}

function sse(response: ServerResponse, frames: string[]): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const frame of frames) response.write(frame);
  response.end();
}

function json(response: ServerResponse, value: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(value));
}

/** Handler for `POST /chat/completions` of a mock upstream (OpenAI wire). */
export function agentChatHandler(request: MockRequest, response: ServerResponse): void {
  const body = bodyOf(request);
  const turn = turnOf(body, (message) => message['role'] === 'tool', 'call_agent_');
  const model = String(body['model']);
  const call =
    turn.kind === 'tool' ? { id: turn.callId, type: 'function', function: { name: 'get_weather', arguments: AGENT_ARGUMENTS } } : null;
  const finish = call === null ? 'stop' : 'tool_calls';
  const base = { id: `chatcmpl-agent-${counter}`, created: Math.floor(Date.now() / 1000), model };
  if (body['stream'] !== true) {
    const message = { role: 'assistant', content: turn.text, ...(call === null ? {} : { tool_calls: [call] }) };
    json(response, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage });
    return;
  }
  const chunk = (delta: Fields, finishReason: string | null = null): string =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
  const frames = [chunk({ role: 'assistant', content: '' })];
  for (const piece of splitInTwo(turn.text)) frames.push(chunk({ content: piece }));
  if (call !== null) {
    frames.push(chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
    for (const piece of splitInTwo(AGENT_ARGUMENTS)) frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  }
  frames.push(chunk({}, finish));
  frames.push(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`, 'data: [DONE]\n\n');
  sse(response, frames);
}

/** Handler for `POST /messages` of a mock Anthropic upstream. */
export function agentMessagesHandler(request: MockRequest, response: ServerResponse): void {
  const body = bodyOf(request);
  const isToolResult = (message: Fields): boolean =>
    Array.isArray(message['content']) && (message['content'] as Fields[]).some((block) => block['type'] === 'tool_result');
  const turn = turnOf(body, isToolResult, 'toolu_agent_');
  const toolUse =
    turn.kind === 'tool' ? { type: 'tool_use', id: turn.callId, name: 'get_weather', input: JSON.parse(AGENT_ARGUMENTS) as Fields } : null;
  const stopReason = toolUse === null ? 'end_turn' : 'tool_use';
  const message = { id: `msg_agent_${counter}`, type: 'message', role: 'assistant', model: String(body['model']) };
  const tokens = { input_tokens: 12, output_tokens: 5 };
  if (body['stream'] !== true) {
    const content = [{ type: 'text', text: turn.text }, ...(toolUse === null ? [] : [toolUse])];
    json(response, { ...message, content, stop_reason: stopReason, stop_sequence: null, usage: tokens });
    return;
  }
  const frame = (data: Fields): string => `event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`;
  const frames = [
    frame({
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...tokens, output_tokens: 1 } },
    }),
    frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ...splitInTwo(turn.text).map((text) => frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
    frame({ type: 'content_block_stop', index: 0 }),
  ];
  if (toolUse !== null) {
    frames.push(frame({ type: 'content_block_start', index: 1, content_block: { ...toolUse, input: {} } }));
    for (const partial of splitInTwo(AGENT_ARGUMENTS)) {
      frames.push(frame({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: partial } }));
    }
    frames.push(frame({ type: 'content_block_stop', index: 1 }));
  }
  frames.push(
    frame({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } }),
    frame({ type: 'message_stop' }),
  );
  sse(response, frames);
}

function splitInTwo(text: string): string[] {
  const middle = Math.ceil(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}
