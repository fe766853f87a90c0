import { describe, expect, it } from 'vitest';
import { PriceBook, readTokenCounts } from './pricing.ts';

const tokens = (promptTokens: number, completionTokens: number, cachedTokens = 0, cacheWriteTokens = 0) => ({
  promptTokens,
  completionTokens,
  cachedTokens,
  cacheWriteTokens,
});

describe('PriceBook', () => {
  const book = new PriceBook(
    new Map([
      ['mock-model', { inputPerMtok: 1, outputPerMtok: 2 }],
      ['openai-east/gpt-4o', { inputPerMtok: 100, outputPerMtok: 100 }],
    ]),
  );

  it('prices input and output tokens per million', () => {
    expect(book.costOf('openai', 'gpt-4o', tokens(1_000_000, 1_000_000))).toBeCloseTo(12.5, 10);
    expect(book.costOf('any', 'mock-model', tokens(12, 5))).toBeCloseTo((12 * 1 + 5 * 2) / 1e6, 15);
  });

  it('charges cached prompt tokens at the cached rate, inside the prompt count', () => {
    // 1000 prompt tokens of which 400 cached: 600 * 2.5 + 400 * 1.25 = 2000 micro-dollars.
    expect(book.costOf('openai', 'gpt-4o', tokens(1000, 0, 400))).toBeCloseTo(0.002, 12);
    // Cache writes at their own rate (claude-sonnet-4: 3.75).
    expect(book.costOf('anthropic', 'claude-sonnet-4', tokens(1000, 0, 0, 1000))).toBeCloseTo(0.00375, 12);
  });

  it('resolves dated snapshots, -latest and vendor prefixes; a qualified override wins', () => {
    expect(book.priceOf('openai', 'gpt-4o-2024-08-06')?.inputPerMtok).toBe(2.5);
    expect(book.priceOf('azure', 'gpt-35-turbo')?.outputPerMtok).toBe(1.5);
    expect(book.priceOf('anthropic', 'claude-3-5-sonnet-20241022')?.outputPerMtok).toBe(15);
    expect(book.priceOf('anthropic', 'claude-3-5-haiku-latest')?.inputPerMtok).toBe(0.8);
    // Vertex names Claude snapshots with `@`.
    expect(book.priceOf('vertex', 'claude-sonnet-4-5@20250929')?.inputPerMtok).toBe(3);
    expect(book.priceOf('vertex', 'text-embedding-005')?.inputPerMtok).toBe(0.1);
    expect(book.priceOf('openrouter', 'openai/gpt-4o-mini')?.inputPerMtok).toBe(0.15);
    expect(book.priceOf('openai-east', 'gpt-4o')?.inputPerMtok).toBe(100);
    expect(book.priceOf('openai-east', 'GPT-4O')?.inputPerMtok).toBe(100);
  });

  it('prices Bedrock model ids, cross-region inference profile prefixes included', () => {
    expect(book.priceOf('aws', 'anthropic.claude-3-5-sonnet-20241022-v2:0')?.cacheWritePerMtok).toBe(3.75);
    expect(book.priceOf('aws', 'us.anthropic.claude-3-5-sonnet-20241022-v2:0')?.inputPerMtok).toBe(3);
    expect(book.priceOf('aws', 'eu.amazon.nova-pro-v1:0')?.outputPerMtok).toBe(3.2);
    expect(book.priceOf('aws', 'xx.amazon.nova-pro-v1:0')).toBeNull();
  });

  it('never guesses: an unknown model has a null cost', () => {
    expect(book.costOf('openai', 'mystery-model', tokens(10, 10))).toBeNull();
    // A prefix of a known id is not that model.
    expect(book.priceOf('openai', 'gpt-4o-mini-tts-x')).toBeNull();
  });
});

describe('readTokenCounts', () => {
  it('reads OpenAI usage, cached tokens included', () => {
    expect(
      readTokenCounts({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, prompt_tokens_details: { cached_tokens: 4 } }),
    ).toEqual({ promptTokens: 12, completionTokens: 5, totalTokens: 17, cachedTokens: 4, cacheWriteTokens: 0 });
  });

  it('treats a missing usage as zero tokens and derives a missing total', () => {
    expect(readTokenCounts(null).totalTokens).toBe(0);
    expect(readTokenCounts({ prompt_tokens: 3, completion_tokens: 4 }).totalTokens).toBe(7);
  });
});
