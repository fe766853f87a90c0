import { describe, expect, it } from 'vitest';
import { SseParser } from '../../streaming/sse-parser.ts';
import { MessagesStreamTranslator } from './stream-translator.ts';

const options = { model: 'm', fallbackId: 'req', estimatedInputTokens: 3 };

function events(text: string): { event: string | null; data: Record<string, unknown> }[] {
  const parser = new SseParser();
  return [...parser.push(Buffer.from(text)), ...parser.finish()].map((event) => ({
    event: event.event,
    data: JSON.parse(event.data) as Record<string, unknown>,
  }));
}

const toolChunk = (call: Record<string, unknown>): Record<string, unknown> => ({ choices: [{ index: 0, delta: { tool_calls: [call] } }] });

describe('MessagesStreamTranslator', () => {
  it('opens a new tool block per call id when the upstream sends no index', () => {
    const translator = new MessagesStreamTranslator(options);
    let text = translator.push(toolChunk({ id: 'a', function: { name: 'f', arguments: '{}' } }));
    text += translator.push(toolChunk({ id: 'b', function: { name: 'g', arguments: '{"x":1}' } }));
    text += translator.finish();
    const starts = events(text).filter((event) => event.event === 'content_block_start');
    expect(starts.map((event) => event.data['content_block'])).toEqual([
      { type: 'tool_use', id: 'a', name: 'f', input: {} },
      { type: 'tool_use', id: 'b', name: 'g', input: {} },
    ]);
    expect(starts.map((event) => event.data['index'])).toEqual([0, 1]);
  });

  it('gives a tool call without an id one of its own', () => {
    const translator = new MessagesStreamTranslator(options);
    const text = translator.push(toolChunk({ index: 0, function: { name: 'f' } })) + translator.finish();
    const start = events(text).find((event) => event.event === 'content_block_start');
    expect(start?.data['content_block']).toMatchObject({ type: 'tool_use', id: 'toolu_req_0', name: 'f' });
  });

  it('ignores choices other than the first and chunks after the end', () => {
    const translator = new MessagesStreamTranslator(options);
    let text = translator.push({
      choices: [
        { index: 1, delta: { content: 'other' } },
        { index: 0, delta: { content: 'mine' } },
      ],
    });
    text += translator.finish();
    expect(translator.done).toBe(true);
    expect(translator.push({ choices: [{ index: 0, delta: { content: 'late' } }] })).toBe('');
    expect(translator.finish()).toBe('');
    expect(translator.fail('api_error', 'x')).toBe('');
    const deltas = events(text).filter((event) => event.event === 'content_block_delta');
    expect(deltas.map((event) => event.data['delta'])).toEqual([{ type: 'text_delta', text: 'mine' }]);
  });

  it('reports a streamed refusal as stop reason refusal', () => {
    const translator = new MessagesStreamTranslator(options);
    const text = translator.push({ choices: [{ index: 0, delta: { refusal: 'No.' }, finish_reason: 'stop' }] }) + translator.finish();
    const delta = events(text).find((event) => event.event === 'message_delta');
    expect(delta?.data['delta']).toEqual({ stop_reason: 'refusal', stop_sequence: null });
  });

  it('sends only the error event when the upstream fails before any chunk', () => {
    const translator = new MessagesStreamTranslator(options);
    expect(events(translator.fail('overloaded_error', 'busy'))).toEqual([
      { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'busy' } } },
    ]);
  });
});
