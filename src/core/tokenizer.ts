/** Counts the tokens of a text. */
export type TokenCounter = (text: string) => number;

let counter: Promise<TokenCounter> | null = null;

/**
 * The o200k_base tokenizer (`gpt-tokenizer`), loaded once, on first use: it takes most of a
 * second to load, so start-up does not pay for it unless a feature that counts is configured.
 */
export function loadTokenCounter(): Promise<TokenCounter> {
  counter ??= import('gpt-tokenizer/encoding/o200k_base').then((module) => module.countTokens as TokenCounter);
  return counter;
}
