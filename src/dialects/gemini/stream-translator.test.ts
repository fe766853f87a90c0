import { describe, expect, it } from 'vitest';
import { GeminiStreamTranslator } from './stream-translator.ts';

const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
  id: 'chatcmpl-7',
  model: 'gpt-4o',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe('GeminiStreamTranslator (OpenAI chat chunks -> streamGenerateContent chunks)', () => {
  it('sends text as it comes and the finish reason with usage in the last chunk', () => {
    const translator = new GeminiStreamTranslator({ model: 'fallback', fallbackId: 'req' });
    expect(translator.push(chunk({ role: 'assistant', content: '' }))).toBeNull();
    expect(translator.push(chunk({ content: 'Hel' }))).toEqual({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }],
      modelVersion: 'gpt-4o',
      responseId: 'chatcmpl-7',
    });
    expect(translator.push(chunk({}, 'stop'))).toBeNull();
    expect(
      translator.push({ id: 'chatcmpl-7', choices: [], usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } }),
    ).toBeNull();
    expect(translator.finish()).toEqual({
      candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 },
      modelVersion: 'gpt-4o',
      responseId: 'chatcmpl-7',
    });
  });

  it('gathers tool-call fragments into whole functionCall parts', () => {
    const translator = new GeminiStreamTranslator({ model: 'm', fallbackId: 'req' });
    translator.push(
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
    );
    translator.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
    translator.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
    translator.push(chunk({ tool_calls: [{ index: 1, id: 'call_b', function: { name: 'get_time', arguments: '{}' } }] }, 'tool_calls'));
    expect(translator.finish().candidates).toEqual([
      {
        content: {
          role: 'model',
          parts: [
            { functionCall: { id: 'call_a', name: 'get_weather', args: { city: 'Paris' } } },
            { functionCall: { id: 'call_b', name: 'get_time', args: {} } },
          ],
        },
        finishReason: 'STOP',
        index: 0,
      },
    ]);
  });

  it('marks reasoning deltas as thoughts and names the fallback model and id when chunks carry none', () => {
    const translator = new GeminiStreamTranslator({ model: 'fallback', fallbackId: 'req-9' });
    expect(translator.push({ choices: [{ index: 0, delta: { reasoning_content: 'hmm' } }] })).toEqual({
      candidates: [{ content: { role: 'model', parts: [{ text: 'hmm', thought: true }] }, index: 0 }],
      modelVersion: 'fallback',
      responseId: 'req-9',
    });
  });
});
