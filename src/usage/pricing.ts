import { builtInPrices, type ModelPrice } from './price-table.ts';

export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
  /** Part of the prompt read from the provider's cache. */
  cachedTokens: number;
  /** Part of the prompt written to the provider's cache. */
  cacheWriteTokens: number;
}

// `-2024-08-06`, `-20250514`, `-latest`, and Vertex's `@20250929`.
const snapshotSuffix = /(?:-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)|@\d{8})$/;
/** Bedrock's cross-region inference profile ids (`us.anthropic.claude-...`) cost what the model costs. */
const crossRegionPrefix = /^(?:us|eu|apac|jp|au|ca|us-gov|global)\./;

/**
 * Prices per model: YAML `pricing:` entries (`<instance>/<model>` before `<model>`) over the
 * built-in table. Unknown models have no price and their cost is null, never a guess.
 */
export class PriceBook {
  private overrides: ReadonlyMap<string, ModelPrice>;
  /**
   * Lookups are pure: remember them per provider, then model (bounded, the hot path asks
   * often); no `<provider>/<model>` key is built and hashed per request.
   */
  private readonly memo = new Map<string, Map<string, ModelPrice | null>>();
  private memoSize = 0;

  constructor(overrides: ReadonlyMap<string, ModelPrice> = new Map()) {
    this.overrides = lowerCased(overrides);
  }

  /** Hot reload: new YAML prices for every call priced from now on (a call already priced keeps its cost). */
  replace(overrides: ReadonlyMap<string, ModelPrice>): void {
    this.overrides = lowerCased(overrides);
    this.memo.clear();
    this.memoSize = 0;
  }

  priceOf(provider: string, model: string): ModelPrice | null {
    const known = this.memo.get(provider)?.get(model);
    if (known !== undefined) return known;
    const price = this.lookUp(provider, model);
    if (this.memoSize >= 10_000) {
      this.memo.clear();
      this.memoSize = 0;
    }
    let models = this.memo.get(provider);
    if (models === undefined) this.memo.set(provider, (models = new Map()));
    models.set(model, price);
    this.memoSize += 1;
    return price;
  }

  private lookUp(provider: string, model: string): ModelPrice | null {
    const id = model.toLowerCase();
    const qualified = `${provider.toLowerCase()}/${id}`;
    const base = id.replace(snapshotSuffix, '');
    // Aggregators name models `<vendor>/<model>`: price them by the model part too.
    const unprefixed = base.includes('/') ? base.slice(base.lastIndexOf('/') + 1) : base;
    return (
      this.overrides.get(qualified) ??
      this.overrides.get(id) ??
      builtInPrices.get(id) ??
      builtInPrices.get(base) ??
      builtInPrices.get(unprefixed) ??
      builtInPrices.get(id.replace(crossRegionPrefix, '')) ??
      null
    );
  }

  /** Cost in USD, or null when the model has no price. */
  costOf(provider: string, model: string, tokens: TokenCounts): number | null {
    const price = this.priceOf(provider, model);
    if (price === null) return null;
    const cached = Math.min(tokens.cachedTokens, tokens.promptTokens);
    const written = Math.min(tokens.cacheWriteTokens, tokens.promptTokens - cached);
    const plain = tokens.promptTokens - cached - written;
    const micro =
      plain * price.inputPerMtok +
      cached * (price.cachedInputPerMtok ?? price.inputPerMtok) +
      written * (price.cacheWritePerMtok ?? price.inputPerMtok) +
      tokens.completionTokens * price.outputPerMtok;
    return micro / 1_000_000;
  }
}

const lowerCased = (overrides: ReadonlyMap<string, ModelPrice>): ReadonlyMap<string, ModelPrice> =>
  new Map([...overrides].map(([key, value]) => [key.toLowerCase(), value]));

/** Token counts from an OpenAI-shaped usage object; absent numbers count as 0. */
export function readTokenCounts(usage: Record<string, unknown> | null): TokenCounts & { totalTokens: number } {
  const number = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);
  const details = (usage?.['prompt_tokens_details'] ?? null) as Record<string, unknown> | null;
  const promptTokens = number(usage?.['prompt_tokens'] ?? usage?.['input_tokens']);
  const completionTokens = number(usage?.['completion_tokens'] ?? usage?.['output_tokens']);
  const totalTokens = number(usage?.['total_tokens']) || promptTokens + completionTokens;
  return {
    promptTokens,
    completionTokens,
    totalTokens,
    cachedTokens: number(details?.['cached_tokens']),
    cacheWriteTokens: number(details?.['cache_write_tokens']),
  };
}
