import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.ts';
import { fromGenerateContentResponse, mapFinishReason, parseGenerateContentResponse } from './convert-chat-response.ts';

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../../test/fixtures/gemini/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;
const created = 1764000000;

describe('fromGenerateContentResponse', () => {
  it('translates text, thought summaries, safety ratings and usage (cached and thinking tokens)', () => {
    const converted = fromGenerateContentResponse(fixture('generate-content-response.json'), 'gemini-2.5-flash', { created });
    expect(converted).toEqual(fixture('chat-completion.expected.json'));
  });

  it('turns function calls into tool_calls with generated ids and the thought signature kept', () => {
    const converted = fromGenerateContentResponse(fixture('function-call-response.json'), 'gemini-2.5-flash', { created });
    const choice = (converted['choices'] as Array<Record<string, unknown>>)[0];
    expect(choice?.['finish_reason']).toBe('tool_calls');
    const message = choice?.['message'] as { content: unknown; tool_calls: Array<Record<string, unknown>> };
    expect(message.content).toBeNull();
    expect(message.tool_calls).toHaveLength(2);
    expect(message.tool_calls[0]).toMatchObject({
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      extra_content: { google: { thought_signature: 'CiQBVKhc7sigAbCdEf' } },
    });
    expect(message.tool_calls[1]?.['extra_content']).toBeUndefined();
    const ids = message.tool_calls.map((call) => call['id'] as string);
    expect(ids[0]).toMatch(/^call_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(2);
  });

  it('answers a blocked prompt with an empty content_filter choice and the prompt feedback', () => {
    const converted = fromGenerateContentResponse(fixture('blocked-prompt-response.json'), 'gemini-2.5-flash', { created });
    expect(converted['choices']).toEqual([
      { index: 0, message: { role: 'assistant', content: '' }, logprobs: null, finish_reason: 'content_filter' },
    ]);
    expect(converted['prompt_feedback']).toMatchObject({ blockReason: 'SAFETY' });
    expect(converted['usage']).toMatchObject({ prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 });
  });

  it('maps finish reasons', () => {
    expect(mapFinishReason('MAX_TOKENS', false)).toBe('length');
    for (const reason of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']) {
      expect(mapFinishReason(reason, false)).toBe('content_filter');
    }
    expect(mapFinishReason('STOP', true)).toBe('tool_calls');
    expect(mapFinishReason('OTHER', false)).toBe('stop');
    expect(mapFinishReason('MALFORMED_FUNCTION_CALL', false)).toBe('stop');
  });

  it('refuses a body that is not a GenerateContentResponse', () => {
    expect(() => parseGenerateContentResponse('{"choices":[]}', 'gemini')).toThrow(GatewayError);
    expect(() => parseGenerateContentResponse('not json', 'gemini')).toThrow(/not a Gemini/);
  });
});
