import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.ts';
import { toChatRequest } from './convert-request.ts';
import { estimateTokens } from '../../gateway/gemini/count-tokens.ts';

const fixture = (name: string): unknown => JSON.parse(readFileSync(`test/fixtures/gemini-dialect/${name}`, 'utf8')) as unknown;

function rejection(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

describe('toChatRequest (Gemini GenerateContentRequest -> OpenAI chat)', () => {
  it('translates system instruction, a function call round trip, tools, tool config and generation config', () => {
    const chat = toChatRequest(fixture('function-calling-request.json'), 'openai/gpt-4o', false);
    expect(chat).toEqual({
      model: 'openai/gpt-4o',
      messages: [
        { role: 'system', content: 'You are a lighting assistant.' },
        { role: 'user', content: 'Dim the lights so the room feels cozy and warm.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_0', type: 'function', function: { name: 'set_light_values', arguments: '{"brightness":25,"color_temp":"warm"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_0', content: '{"brightness":25,"colorTemperature":"warm"}' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'set_light_values',
            description: 'Sets the brightness and color temperature of a light.',
            parameters: {
              type: 'object',
              properties: {
                brightness: { type: 'integer', description: 'Light level from 0 to 100.' },
                color_temp: { type: ['string', 'null'], enum: ['daylight', 'cool', 'warm'] },
              },
              required: ['brightness', 'color_temp'],
            },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'set_light_values' } },
      stop: ['Title'],
      temperature: 1.0,
      max_tokens: 800,
      top_p: 0.8,
      reasoning_effort: 'low',
    });
  });

  it('reads snake_case fields, images as data URLs, JSON schemas as structured output, and asks streams for usage', () => {
    const chat = toChatRequest(fixture('multimodal-request.json'), 'gpt-4o', true);
    expect(chat['messages']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Tell me about this instrument' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ==' } },
        ],
      },
    ]);
    expect(chat['response_format']).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'response',
        schema: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } }, minItems: 1 },
      },
    });
    expect(chat).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('pairs responses with calls by id when the client kept one, else by name in order', () => {
    const call = (name: string, id?: string): unknown => ({ functionCall: { name, args: {}, ...(id ? { id } : {}) } });
    const answer = (name: string, id?: string): unknown => ({ functionResponse: { name, response: { ok: name }, ...(id ? { id } : {}) } });
    const chat = toChatRequest(
      {
        contents: [
          { role: 'user', parts: [{ text: 'go' }] },
          { role: 'model', parts: [{ text: 'Calling.' }, call('a'), call('b', 'call_b1'), call('a')] },
          { role: 'user', parts: [answer('b', 'call_b1'), answer('a'), answer('a'), { text: 'and now?' }] },
        ],
      },
      'm',
      false,
    );
    const messages = chat['messages'] as Array<Record<string, unknown>>;
    const ids = (messages[1]?.['tool_calls'] as Array<{ id: string }>).map((toolCall) => toolCall.id);
    expect(ids).toEqual(['call_0', 'call_b1', 'call_1']);
    expect(messages[1]?.['content']).toBe('Calling.');
    expect(messages.slice(2).map((message) => message['tool_call_id'] ?? message['content'])).toEqual([
      'call_b1',
      'call_0',
      'call_1',
      'and now?',
    ]);
  });

  it('drops thought parts and a model turn made of thoughts alone', () => {
    const contents = [
      { role: 'user', parts: [{ text: 'a' }] },
      { role: 'model', parts: [{ text: 'thinking...', thought: true, thoughtSignature: 'c2ln' }] },
      { role: 'model', parts: [{ text: 'pondering', thought: true }, { text: 'b' }] },
    ];
    expect(toChatRequest({ contents }, 'm', false)['messages']).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
    ]);
  });

  it('maps JSON mode, thinking levels and tool modes', () => {
    const contents = [{ parts: [{ text: 'x' }] }];
    expect(toChatRequest({ contents, generationConfig: { responseMimeType: 'application/json' } }, 'm', false)['response_format']).toEqual({
      type: 'json_object',
    });
    const thinking = (thinkingConfig: unknown): unknown =>
      toChatRequest({ contents, generationConfig: { thinkingConfig } }, 'm', false)['reasoning_effort'];
    expect(thinking({ thinkingLevel: 'HIGH' })).toBe('high');
    expect(thinking({ thinkingBudget: 0 })).toBeUndefined();
    expect(thinking({ thinkingBudget: -1 })).toBe('medium');
    expect(thinking({ thinkingBudget: 24576 })).toBe('high');
    const mode = (functionCallingConfig: unknown): unknown =>
      toChatRequest({ contents, toolConfig: { functionCallingConfig } }, 'm', false)['tool_choice'];
    expect(mode({ mode: 'ANY' })).toBe('required');
    expect(mode({ mode: 'NONE' })).toBe('none');
    expect(mode({ mode: 'AUTO' })).toBe('auto');
  });

  it('refuses what it cannot carry with a 400 naming the field', () => {
    expect(rejection(() => toChatRequest({}, 'm', false)).message).toContain('contents');
    const search = rejection(() => toChatRequest({ contents: [{ parts: [{ text: 'x' }] }], tools: [{ googleSearch: {} }] }, 'm', false));
    expect(search.status).toBe(400);
    expect(search.message).toContain('googleSearch');
    const video = { contents: [{ parts: [{ inlineData: { mimeType: 'video/mp4', data: 'AAAA' } }] }] };
    expect(rejection(() => toChatRequest(video, 'm', false)).message).toContain('video/mp4');
    expect(rejection(() => toChatRequest({ contents: [{ role: 'system', parts: [] }] }, 'm', false)).message).toContain('role');
  });
});

describe('estimateTokens (countTokens)', () => {
  it('counts texts, calls and tool declarations with a tokenizer, and media parts at a flat rate', async () => {
    const text = await estimateTokens({ contents: [{ parts: [{ text: 'hello world' }] }] });
    expect(text).toBe(2);
    const withImage = await estimateTokens({
      systemInstruction: { parts: [{ text: 'hello world' }] },
      contents: [{ parts: [{ text: 'hello world' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] }],
    });
    expect(withImage).toBe(2 + 2 + 258);
  });
});
