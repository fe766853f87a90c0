import { describe, expect, it } from 'vitest';
import { finishReasonOf, toGenerateContentResponse, toUsageMetadata } from './convert-response.ts';

describe('toGenerateContentResponse (OpenAI chat completion -> Gemini GenerateContentResponse)', () => {
  it('keeps text, the finish reason, usage, the model and the id', () => {
    const completion = {
      id: 'chatcmpl-1',
      model: 'gpt-4o-2024-08-06',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
    };
    expect(toGenerateContentResponse(completion, 'gpt-4o', 'req-1')).toEqual({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hello.' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, totalTokenCount: 13 },
      modelVersion: 'gpt-4o-2024-08-06',
      responseId: 'chatcmpl-1',
    });
  });

  it('turns reasoning into a thought part and tool calls into functionCall parts with parsed args', () => {
    const completion = {
      choices: [
        {
          message: {
            content: null,
            reasoning_content: 'The user wants Paris.',
            tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const response = toGenerateContentResponse(completion, 'm', 'req-2');
    expect(response.candidates[0]).toEqual({
      content: {
        role: 'model',
        parts: [
          { text: 'The user wants Paris.', thought: true },
          { functionCall: { id: 'call_9', name: 'get_weather', args: { city: 'Paris' } } },
        ],
      },
      finishReason: 'STOP',
      index: 0,
    });
    expect(response).toMatchObject({ modelVersion: 'm', responseId: 'req-2' });
    expect(response.usageMetadata).toBeUndefined();
  });

  it('splits thinking tokens out of the candidates count and reports cached prompt tokens', () => {
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 50,
      total_tokens: 150,
      prompt_tokens_details: { cached_tokens: 40 },
      completion_tokens_details: { reasoning_tokens: 30 },
    };
    expect(toUsageMetadata(usage)).toEqual({
      promptTokenCount: 100,
      candidatesTokenCount: 20,
      thoughtsTokenCount: 30,
      cachedContentTokenCount: 40,
      totalTokenCount: 150,
    });
  });

  it('maps finish reasons', () => {
    expect(['stop', 'tool_calls', 'length', 'content_filter', 'weird'].map(finishReasonOf)).toEqual([
      'STOP',
      'STOP',
      'MAX_TOKENS',
      'SAFETY',
      'OTHER',
    ]);
  });
});
