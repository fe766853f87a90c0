import { describe, expect, it } from 'vitest';

import { PriceBook } from '../../usage/pricing.ts';
import { meteredChargesOf, type PriceOf } from './metered-charges.ts';

const prices = new PriceBook(new Map([['house-video', { inputPerMtok: 0, outputPerMtok: 0, perSecond: 0.5 }]]));
const priceOf: PriceOf = (model) => prices.priceOf('openai', model);

describe('meteredChargesOf', () => {
  it('charges a run only in a terminal state with usage, on its model', () => {
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
    expect(meteredChargesOf('run', { status: 'in_progress', usage, model: 'gpt-4o' }, priceOf)).toEqual([]);
    expect(meteredChargesOf('run', { status: 'completed', usage: null, model: 'gpt-4o' }, priceOf)).toEqual([]);
    for (const status of ['completed', 'failed', 'incomplete', 'cancelled', 'expired']) {
      expect(meteredChargesOf('run', { status, usage, model: 'gpt-4o' }, priceOf)).toEqual([{ model: 'gpt-4o', usage }]);
    }
  });

  it('charges an eval run per model, in the shape metering reads', () => {
    const entry = {
      model_name: 'gpt-4o',
      invocation_count: 2,
      prompt_tokens: 10,
      completion_tokens: 4,
      total_tokens: 14,
      cached_tokens: 6,
    };
    expect(meteredChargesOf('eval_run', { status: 'running', per_model_usage: [entry] }, priceOf)).toEqual([]);
    expect(meteredChargesOf('eval_run', { status: 'completed', per_model_usage: [entry, 'junk'] }, priceOf)).toEqual([
      {
        model: 'gpt-4o',
        usage: {
          prompt_tokens: 10,
          completion_tokens: 4,
          total_tokens: 14,
          prompt_tokens_details: { cached_tokens: 6 },
          invocation_count: 2,
        },
      },
    ]);
  });

  it('prices a fine-tuning job by its training price, null for a model without one', () => {
    const job = { status: 'succeeded', trained_tokens: 2_000_000 };
    expect(meteredChargesOf('fine_tuning_job', { ...job, status: 'running' }, priceOf)).toEqual([]);
    expect(meteredChargesOf('fine_tuning_job', { ...job, model: 'gpt-4o-mini-2024-07-18' }, priceOf)[0]?.costUsd).toBe(6);
    expect(meteredChargesOf('fine_tuning_job', { ...job, model: 'gpt-4o-mini-2024-07-18' }, priceOf)[0]?.usage).toEqual({
      trained_tokens: 2_000_000,
      total_tokens: 2_000_000,
    });
    expect(meteredChargesOf('fine_tuning_job', { ...job, model: 'o4-mini' }, priceOf)[0]?.costUsd).toBeNull();
  });

  it('prices a completed video by its seconds (a string in the API), null when unpriced', () => {
    expect(meteredChargesOf('video', { status: 'in_progress', seconds: '4', model: 'sora-2' }, priceOf)).toEqual([]);
    expect(meteredChargesOf('video', { status: 'completed', seconds: '4', model: 'house-video', size: '720x1280' }, priceOf)).toEqual([
      { model: 'house-video', usage: { seconds: 4, size: '720x1280' }, costUsd: 2 },
    ]);
    expect(meteredChargesOf('video', { status: 'completed', seconds: 'x', model: 'sora-2' }, priceOf)).toEqual([]);
    expect(meteredChargesOf('video', { status: 'completed', seconds: 4, model: 'other' }, priceOf)[0]?.costUsd).toBeNull();
  });
});
