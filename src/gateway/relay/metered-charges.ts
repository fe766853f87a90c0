import { isJsonObject } from '../../core/json.ts';
import type { ModelPrice } from '../../usage/price-table.ts';
import type { MeteredKind } from './openai-resources.ts';

/** One usage record a finished object charges: its model, its usage, and its cost when it is not the tokens'. */
export interface Charge {
  readonly model: string;
  readonly usage: Record<string, unknown>;
  /** Absent: the tokens at the model's price (metering's own rule). */
  readonly costUsd?: number | null;
}

export type PriceOf = (model: string) => ModelPrice | null;

const runEnded: ReadonlySet<unknown> = new Set(['completed', 'failed', 'incomplete', 'cancelled', 'expired']);
const evalRunEnded: ReadonlySet<unknown> = new Set(['completed', 'failed', 'canceled']);
/** Models an eval run reports at most (an answer is bounded already; this bounds the records). */
const maximumEvalModels = 32;

/**
 * What a finished object of a metered kind charges, from what the provider reported in it;
 * nothing while it is not finished or reports nothing:
 * - a run in a terminal state with `usage`: its tokens, on its `model`;
 * - an eval run in a terminal state: each `per_model_usage` entry's tokens, on its `model_name`;
 * - a fine-tuning job that `succeeded`: its `trained_tokens` at the model's training price;
 * - a `completed` video: its `seconds` at the model's price per second (`size` kept in the usage).
 * Cost is null only when the price table has no such price.
 */
export function meteredChargesOf(
  kind: Exclude<MeteredKind, 'vector_store_search'>,
  object: Record<string, unknown>,
  priceOf: PriceOf,
): Charge[] {
  const model = modelOf(object['model']);
  switch (kind) {
    case 'run': {
      const usage = object['usage'];
      return runEnded.has(object['status']) && isJsonObject(usage) ? [{ model, usage }] : [];
    }
    case 'eval_run':
      return evalRunEnded.has(object['status']) ? evalCharges(object['per_model_usage']) : [];
    case 'fine_tuning_job': {
      const trained = count(object['trained_tokens']);
      if (object['status'] !== 'succeeded' || trained === null) return [];
      const price = priceOf(model)?.trainingPerMtok;
      const costUsd = price === undefined ? null : (trained * price) / 1_000_000;
      return [{ model, usage: { trained_tokens: trained, total_tokens: trained }, costUsd }];
    }
    case 'video': {
      const seconds = count(object['seconds']);
      if (object['status'] !== 'completed' || seconds === null) return [];
      const price = priceOf(model)?.perSecond;
      const size = typeof object['size'] === 'string' ? { size: object['size'].slice(0, 32) } : {};
      return [{ model, usage: { seconds, ...size }, costUsd: price === undefined ? null : seconds * price }];
    }
  }
}

/** An eval run's `per_model_usage`, one charge per model, in the shape metering reads. */
function evalCharges(perModel: unknown): Charge[] {
  if (!Array.isArray(perModel)) return [];
  return perModel.slice(0, maximumEvalModels).flatMap((entry: unknown): Charge[] => {
    if (!isJsonObject(entry)) return [];
    const model = modelOf(entry['model_name']);
    const usage: Record<string, unknown> = {
      prompt_tokens: count(entry['prompt_tokens']) ?? 0,
      completion_tokens: count(entry['completion_tokens']) ?? 0,
      total_tokens: count(entry['total_tokens']) ?? 0,
      prompt_tokens_details: { cached_tokens: count(entry['cached_tokens']) ?? 0 },
      invocation_count: count(entry['invocation_count']) ?? 0,
    };
    return [{ model, usage }];
  });
}

/** A model name as the provider reported it (bounded), `unknown` when it did not. */
function modelOf(value: unknown): string {
  return typeof value === 'string' && value !== '' ? value.slice(0, 256) : 'unknown';
}

/** A count the API sends as a number or a numeric string (a video's `"8"` seconds); null when it is neither. */
function count(value: unknown): number | null {
  const parsed = typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  return typeof parsed === 'number' && Number.isFinite(parsed) && parsed >= 0 ? parsed : null;
}
