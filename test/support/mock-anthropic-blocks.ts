// Answers of the mock Anthropic upstream built from a list of content blocks, JSON or as the
// event stream Anthropic sends for them: thinking blocks with their signature, text with
// citations, tool_use after text (an agent step), and a matched stop sequence.

import { MOCK_TOOL_INPUT } from './mock-anthropic-wire.ts';
import type { MockUsage } from './mock-anthropic-wire.ts';

export const MOCK_THINKING = 'Let me think this through.';
export const MOCK_SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds';
export const MOCK_STOP_SEQUENCE = '###';
export const MOCK_CITATION = {
  type: 'char_location',
  cited_text: 'The sky is blue.',
  document_index: 0,
  document_title: 'Facts',
  start_char_index: 0,
  end_char_index: 16,
};
/** The text an agent step writes before its tool call. */
export const MOCK_AGENT_PREAMBLE = 'Let me look that up.';
/** The text of the agent's last step, once it has the tool result. */
export const MOCK_AGENT_ANSWER = 'It is sunny in Paris.';

export type Block = Record<string, unknown>;

export interface BlocksAnswer {
  content: Block[];
  stopReason: string;
  stopSequence: string | null;
}

/** Thinking (signed), then text citing a document, stopped by a stop sequence. */
export function richAnswer(): BlocksAnswer {
  return {
    content: [
      { type: 'thinking', thinking: MOCK_THINKING, signature: MOCK_SIGNATURE },
      { type: 'text', text: 'The sky is blue.', citations: [MOCK_CITATION] },
    ],
    stopReason: 'stop_sequence',
    stopSequence: MOCK_STOP_SEQUENCE,
  };
}

/** One step of a tool loop: text then a call of the first tool, or the final text once a tool_result came back. */
export function agentAnswer(body: Record<string, unknown>, counter: number): BlocksAnswer {
  const messages = Array.isArray(body['messages']) ? (body['messages'] as Block[]) : [];
  const content = messages.at(-1)?.['content'];
  const answered = Array.isArray(content) && content.some((block) => (block as Block | null)?.['type'] === 'tool_result');
  if (answered) return { content: [{ type: 'text', text: MOCK_AGENT_ANSWER }], stopReason: 'end_turn', stopSequence: null };
  const tools = Array.isArray(body['tools']) ? (body['tools'] as Block[]) : [];
  const name = typeof tools[0]?.['name'] === 'string' ? tools[0]['name'] : 'tool';
  return {
    content: [
      { type: 'text', text: MOCK_AGENT_PREAMBLE },
      { type: 'tool_use', id: `toolu_agent_${counter}`, name, input: MOCK_TOOL_INPUT },
    ],
    stopReason: 'tool_use',
    stopSequence: null,
  };
}

export function blocksMessageJson(answer: BlocksAnswer, model: string, counter: number, usage: MockUsage): string {
  return JSON.stringify({
    id: `msg_mock_${counter}`,
    type: 'message',
    role: 'assistant',
    model,
    content: answer.content,
    stop_reason: answer.stopReason,
    stop_sequence: answer.stopSequence,
    usage: { ...usage, output_tokens: 9 },
  });
}

function frame(data: Record<string, unknown>): string {
  return `event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The events of one block: its empty start, its deltas, its stop. */
function blockFrames(block: Block, index: number): string[] {
  const delta = (value: Record<string, unknown>): string => frame({ type: 'content_block_delta', index, delta: value });
  const frames: string[] = [];
  if (block['type'] === 'thinking') {
    frames.push(frame({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
    frames.push(
      delta({ type: 'thinking_delta', thinking: block['thinking'] }),
      delta({ type: 'signature_delta', signature: block['signature'] }),
    );
  } else if (block['type'] === 'tool_use') {
    frames.push(frame({ type: 'content_block_start', index, content_block: { ...block, input: {} } }));
    frames.push(delta({ type: 'input_json_delta', partial_json: JSON.stringify(block['input']) }));
  } else {
    frames.push(frame({ type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: [] } }));
    const citations = Array.isArray(block['citations']) ? (block['citations'] as unknown[]) : [];
    for (const citation of citations) frames.push(delta({ type: 'citations_delta', citation }));
    frames.push(delta({ type: 'text_delta', text: block['text'] }));
  }
  frames.push(frame({ type: 'content_block_stop', index }));
  return frames;
}

export function blocksStreamEvents(answer: BlocksAnswer, model: string, counter: number, usage: MockUsage): string[] {
  const message = {
    id: `msg_mock_${counter}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
  };
  return [
    frame({ type: 'message_start', message: { ...message, usage: { ...usage, output_tokens: 1 } } }),
    ...answer.content.flatMap((block, index) => blockFrames(block, index)),
    frame({
      type: 'message_delta',
      delta: { stop_reason: answer.stopReason, stop_sequence: answer.stopSequence },
      usage: { output_tokens: 9 },
    }),
    frame({ type: 'message_stop' }),
  ];
}
