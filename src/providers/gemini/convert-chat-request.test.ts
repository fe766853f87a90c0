import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.ts';
import { thinkingBudgets, toGenerateContentRequest } from './convert-chat-request.ts';
import { cleanSchema } from './convert-schema.ts';

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../../test/fixtures/gemini/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;

const user = (content: unknown): Record<string, unknown> => ({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content }] });

describe('toGenerateContentRequest', () => {
  it('translates a full OpenAI request (system, images, tool calls and results, tools, config, thinking, safety)', () => {
    expect(toGenerateContentRequest(fixture('chat-request.json'))).toEqual(fixture('generate-content-request.expected.json'));
  });

  it('sends a plain prompt without optional fields', () => {
    expect(toGenerateContentRequest(user('hi'))).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    const withEmptyTurn = {
      model: 'm',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'b' },
      ],
    };
    expect(toGenerateContentRequest(withEmptyTurn).contents).toEqual([
      { role: 'user', parts: [{ text: 'a' }] },
      { role: 'user', parts: [{ text: 'b' }] },
    ]);
  });

  it('maps reasoning_effort to a thinking budget, none turning thinking off, and lets thinking_config override it', () => {
    const config = (extra: Record<string, unknown>): unknown => toGenerateContentRequest({ ...user('x'), ...extra }).generationConfig;
    expect(config({ reasoning_effort: 'high' })).toEqual({ thinkingConfig: { thinkingBudget: 24576, includeThoughts: true } });
    expect(config({ reasoning_effort: 'medium' })).toEqual({ thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } });
    expect(config({ reasoning_effort: 'none' })).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(config({ reasoning_effort: 'low', google: { thinking_config: { thinking_budget: 300 } } })).toEqual({
      thinkingConfig: { thinkingBudget: 300, includeThoughts: true },
    });
    expect(config({ thinking_config: { include_thoughts: true, thinking_level: 'low' } })).toEqual({
      thinkingConfig: { includeThoughts: true, thinkingLevel: 'low' },
    });
    expect(thinkingBudgets['minimal']).toBe(1024);
    expect(() => config({ reasoning_effort: 'extreme' })).toThrow(GatewayError);
  });

  it('maps tool_choice and response_format json_object', () => {
    const request = (extra: Record<string, unknown>) => toGenerateContentRequest({ ...user('x'), ...extra });
    expect(request({ tool_choice: 'required' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(request({ tool_choice: 'none' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(request({ tool_choice: { type: 'function', function: { name: 'f' } } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] },
    });
    expect(request({ response_format: { type: 'json_object' } }).generationConfig).toEqual({ responseMimeType: 'application/json' });
    expect(request({ max_completion_tokens: 9, max_tokens: 5, stop: 'X' }).generationConfig).toEqual({
      maxOutputTokens: 9,
      stopSequences: ['X'],
    });
  });

  it('takes audio and file parts inline, and refuses what Gemini cannot take', () => {
    const parts = toGenerateContentRequest(
      user([
        { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'mp3' } },
        { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
      ]),
    ).contents[0]?.parts;
    expect(parts).toEqual([
      { inlineData: { mimeType: 'audio/mp3', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
    ]);
    expect(() => toGenerateContentRequest(user([{ type: 'file', file: { file_id: 'file-1' } }]))).toThrow(/file ids/);
    expect(() => toGenerateContentRequest(user([{ type: 'video', url: 'x' }]))).toThrow(GatewayError);
    const orphan = { model: 'm', messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }] };
    expect(() => toGenerateContentRequest(orphan)).toThrow(/matches no earlier tool call/);
    const badArgs = {
      model: 'm',
      messages: [{ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '[1' } }] }],
    };
    expect(() => toGenerateContentRequest(badArgs)).toThrow(/JSON object/);
  });
});

describe('cleanSchema', () => {
  it('drops keywords Gemini rejects and keeps string enums only', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      properties: { n: { type: 'integer', enum: [1, 2], examples: [1] }, c: { const: 'x' } },
    };
    expect(cleanSchema(schema)).toEqual({ type: 'object', properties: { n: { type: 'integer' }, c: { enum: ['x'] } } });
  });

  it('stops inlining a recursive $ref', () => {
    const schema = { $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } }, $ref: '#/$defs/node' };
    expect(JSON.stringify(cleanSchema(schema)).length).toBeLessThan(5000);
  });
});
