import type { ServerResponse } from 'node:http';

import { MOCK_AGENT_ANSWER, MOCK_AGENT_PREAMBLE } from '../support/mock-anthropic-blocks.ts';
import { MOCK_TOOL_INPUT } from '../support/mock-anthropic.ts';
import type { MockRequest } from '../support/mock-upstream.ts';

// An OpenAI chat completions route for a mock upstream that acts as an agent's model: it
// writes text and then calls the request's first tool, and answers with text alone once the
// conversation ends with the tool's result. JSON or SSE, as asked.

type Json = Record<string, unknown>;

function stepOf(body: Json): { content: string; call: Json | null } {
  const messages = Array.isArray(body['messages']) ? (body['messages'] as Json[]) : [];
  if (messages.at(-1)?.['role'] === 'tool') return { content: MOCK_AGENT_ANSWER, call: null };
  const tools = Array.isArray(body['tools']) ? (body['tools'] as { function?: { name?: string } }[]) : [];
  const name = tools[0]?.function?.name ?? 'tool';
  const call = { id: `call_agent_${messages.length}`, type: 'function', function: { name, arguments: JSON.stringify(MOCK_TOOL_INPUT) } };
  return { content: MOCK_AGENT_PREAMBLE, call };
}

const usage = { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 };

export function answerAgentStep(request: MockRequest, response: ServerResponse): void {
  const body = (request.body ?? {}) as Json;
  const { content, call } = stepOf(body);
  const finish = call === null ? 'stop' : 'tool_calls';
  const base = { id: 'chatcmpl-agent', created: 1_700_000_000, model: String(body['model']) };
  if (body['stream'] !== true) {
    const message = { role: 'assistant', content, ...(call === null ? {} : { tool_calls: [call] }) };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  const chunk = (delta: Json, finishReason: string | null = null, extra: Json = {}): string =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;
  const frames = [chunk({ role: 'assistant', content: '' }), chunk({ content })];
  if (call !== null) frames.push(chunk({ tool_calls: [{ index: 0, ...call }] }));
  frames.push(
    chunk({}, finish),
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`,
    'data: [DONE]\n\n',
  );
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(frames.join(''));
}
