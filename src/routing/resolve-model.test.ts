import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.ts';
import type { ProviderAdapter, UpstreamModel } from '../providers/provider.ts';
import { ModelCatalog } from './model-catalog.ts';
import { resolveModel } from './resolve-model.ts';
import { rejected } from '../testing/thrown.ts';

const adapter = (name: string, listing: () => Promise<UpstreamModel[]>): ProviderAdapter => ({
  name,
  type: 'openai',
  chatCompletion: () => Promise.reject(new Error('not called')),
  listModels: listing,
  forward: () => Promise.reject(new Error('not called')),
  baseUrl: 'http://127.0.0.1:1',
  credentialHeaders: () => ({}),
});

const catalogOf = (adapters: ProviderAdapter[], configured: Record<string, string[]>, now = () => Date.now()) =>
  new ModelCatalog(adapters, {
    refreshIntervalMs: 3_600_000,
    recheckIntervalMs: 60_000,
    configured: new Map(Object.entries(configured)),
    logger: pino({ level: 'silent' }),
    now,
  });

describe('resolveModel', () => {
  const openai = adapter('openai', async () => []);
  const router = adapter('openrouter', async () => []);
  const catalog = catalogOf([openai, router], { openai: ['gpt-4o', 'shared'], openrouter: ['google/gemini-x', 'shared'] });

  it('splits <instance>/<model> at the first slash', async () => {
    expect(await resolveModel(catalog, 'openrouter/google/gemini-x', undefined)).toEqual({ adapter: router, model: 'google/gemini-x' });
  });

  it('treats a slash id whose prefix is no instance as a bare model id', async () => {
    expect(await resolveModel(catalog, 'google/gemini-x', undefined)).toEqual({ adapter: router, model: 'google/gemini-x' });
  });

  it('gives a bare id to the first instance in configuration order', async () => {
    expect((await resolveModel(catalog, 'shared', undefined)).adapter).toBe(openai);
  });

  it('routes by the provider hint and strips its own prefix', async () => {
    expect(await resolveModel(catalog, 'shared', 'openrouter')).toEqual({ adapter: router, model: 'shared' });
    expect(await resolveModel(catalog, 'openrouter/shared', 'openrouter')).toEqual({ adapter: router, model: 'shared' });
  });

  it('refuses an unknown hint with 400 and an unknown model with 404', async () => {
    const hint = await rejected(GatewayError, resolveModel(catalog, 'gpt-4o', 'nope'));
    expect([hint.status, hint.code, hint.param]).toEqual([400, 'unknown_provider', 'provider']);
    const missing = await rejected(GatewayError, resolveModel(catalog, 'openai/gpt-5', undefined));
    expect([missing.status, missing.type, missing.code]).toEqual([404, 'not_found_error', 'model_not_found']);
    expect((await rejected(GatewayError, resolveModel(catalog, 'nothing', undefined))).code).toBe('model_not_found');
  });

  it('forwards a qualified selector when the listing never loaded, and refreshes a stale listing on a miss', async () => {
    let models: UpstreamModel[] = [{ id: 'old' }];
    let fails = true;
    let clock = 1_000_000;
    const upstream = adapter('up', async () => {
      if (fails) throw new Error('down');
      return models;
    });
    const live = catalogOf([upstream], {}, () => clock);
    await live.start(1000);
    expect((await resolveModel(live, 'up/anything', undefined)).model).toBe('anything');
    fails = false;
    await live.refresh('up');
    models = [{ id: 'old' }, { id: 'new' }];
    expect((await rejected(GatewayError, resolveModel(live, 'up/new', undefined))).code).toBe('model_not_found');
    clock += 11_000;
    expect((await resolveModel(live, 'up/new', undefined)).model).toBe('new');
    live.stop();
  });

  it('does not let client requests hammer a failing listing: one on-demand refresh per ten seconds', async () => {
    let calls = 0;
    let clock = 1_000_000;
    const upstream = adapter('up', async () => {
      calls += 1;
      if (calls > 1) throw new Error('down');
      return [{ id: 'known' }];
    });
    const live = catalogOf([upstream], {}, () => clock);
    await live.start(1000);
    clock += 11_000;
    for (let index = 0; index < 20; index += 1) await rejected(GatewayError, resolveModel(live, 'up/unknown', undefined));
    expect(calls).toBe(2);
    clock += 11_000;
    await rejected(GatewayError, resolveModel(live, 'up/unknown', undefined));
    expect(calls).toBe(3);
    live.stop();
  });
});
