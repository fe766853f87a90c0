import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.ts';
import { thrown } from '../../testing/thrown.ts';
import { stopReasonOf, toMessagesResponse, toMessagesUsage, toolInput } from './convert-response.ts';

describe('stopReasonOf', () => {
  it.each([
    ['stop', false, null, 'end_turn'],
    ['length', false, null, 'max_tokens'],
    ['tool_calls', false, null, 'tool_use'],
    ['function_call', false, null, 'tool_use'],
    ['content_filter', false, null, 'refusal'],
    ['stop', true, null, 'tool_use'],
    ['stop', false, 'END', 'stop_sequence'],
    [null, false, null, 'end_turn'],
    ['something_new', false, null, 'end_turn'],
  ])('%s (tool use %s, stop sequence %s) -> %s', (finishReason, hasToolUse, stopSequence, expected) => {
    expect(stopReasonOf(finishReason, hasToolUse, stopSequence)).toBe(expected);
  });
});

describe('toMessagesUsage', () => {
  it('takes cache reads and writes out of the prompt tokens', () => {
    const usage = { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 30 } };
    expect(toMessagesUsage(usage)).toEqual({
      input_tokens: 10,
      output_tokens: 7,
      cache_read_input_tokens: 60,
      cache_creation_input_tokens: 30,
    });
  });

  it('falls back to zeros (and the estimate for input) without usage, and ignores junk', () => {
    expect(toMessagesUsage(null, 9)).toEqual({
      input_tokens: 9,
      output_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
    expect(toMessagesUsage({ prompt_tokens: 'x', completion_tokens: -1 })).toMatchObject({ input_tokens: 0, output_tokens: 0 });
  });
});

describe('toolInput', () => {
  it('parses JSON arguments into an object and never fails', () => {
    expect(toolInput('{"a":1}')).toEqual({ a: 1 });
    expect(toolInput('')).toEqual({});
    expect(toolInput('{"a":')).toEqual({});
    expect(toolInput('[1]')).toEqual({});
    expect(toolInput({ a: 2 })).toEqual({ a: 2 });
  });
});

describe('toMessagesResponse', () => {
  it('answers an empty content list when the upstream said nothing', () => {
    const chat = { id: 'x', choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'stop' }] };
    const message = toMessagesResponse(JSON.stringify(chat), 'fallback', 'req');
    expect(message).toMatchObject({ id: 'msg_x', model: 'fallback', content: [], stop_reason: 'end_turn' });
  });

  it('uses the request id when the upstream sent no id', () => {
    const chat = { choices: [{ message: { content: 'hi' } }] };
    expect(toMessagesResponse(JSON.stringify(chat), 'm', 'req-9').id).toBe('msg_req-9');
  });

  it('is a provider error when there is no choice to translate', () => {
    const error = thrown(GatewayError, () => toMessagesResponse('{"choices":[]}', 'm', 'r'));
    expect(error.type).toBe('provider_error');
  });
});
