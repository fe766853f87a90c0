import { describe, expect, it } from 'vitest';
import { answerCount, defaultOutputCap, estimateTokens } from './estimate.ts';

describe('estimateTokens', () => {
  it('multiplies the output cap by every count field: n, best_of, image n, Gemini candidateCount', () => {
    expect(estimateTokens({ max_tokens: 50, n: 100 }).outputTokens).toBe(5000);
    expect(estimateTokens({ max_tokens: 50, n: 2, best_of: 5 }).outputTokens).toBe(250);
    expect(estimateTokens({ prompt: 'a cat', n: 4 }).outputTokens).toBe(4 * defaultOutputCap);
    expect(estimateTokens({ generationConfig: { maxOutputTokens: 10, candidateCount: 3 } }).outputTokens).toBe(30);
    // A multipart form's fields are text.
    expect(estimateTokens({ n: '8' }).outputTokens).toBe(8 * defaultOutputCap);
  });

  it('reads every spelling a provider accepts, and the largest cap or count when several are named', () => {
    // Google's JSON parser takes the proto names too; Bedrock Converse nests maxTokens in inferenceConfig.
    expect(estimateTokens({ generation_config: { max_output_tokens: 1000, candidate_count: 5 } }).outputTokens).toBe(5000);
    expect(estimateTokens({ inferenceConfig: { maxTokens: 20_000 } }).outputTokens).toBe(20_000);
    expect(estimateTokens({ max_tokens: 1, generationConfig: { maxOutputTokens: 9000 } }).outputTokens).toBe(9000);
    expect(estimateTokens({ max_completion_tokens: 10, max_tokens: 500 }).outputTokens).toBe(500);
  });

  it('counts each prompt of a legacy completion, not the tokens of one', () => {
    expect(answerCount({ prompt: ['a', 'b', 'c'], n: 2 })).toBe(6);
    expect(answerCount({ prompt: [1, 2, 3] })).toBe(1);
    expect(answerCount({ prompt: [[1], [2]] })).toBe(2);
  });

  it('stays finite and ignores what is not a positive count', () => {
    const huge = estimateTokens({ max_tokens: 1e308, n: 1e308, best_of: Number.MAX_VALUE });
    expect(Number.isFinite(huge.outputTokens)).toBe(true);
    expect(huge.outputTokens).toBe(1e9);
    for (const n of [0, -3, 'many', null, Number.NaN, '1e400']) expect(answerCount({ n })).toBe(1);
  });
});
