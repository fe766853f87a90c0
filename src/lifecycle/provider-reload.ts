import type { Logger } from 'pino';
import type { ProviderSettings } from '../providers/provider-settings.ts';
import type { Settings } from '../config/settings.ts';
import type { Service } from '../core/service.ts';
import type { ProviderAdapter } from '../providers/provider.ts';
import { createAdapters } from '../providers/registry.ts';
import type { UpstreamClient } from '../providers/upstream-client.ts';
import type { CircuitBreakers } from '../routing/circuit-breaker.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';

/** What a provider swap touches: the catalog (the registry requests read), the client's pools, the circuits. */
export interface ProviderRuntime {
  catalog: ModelCatalog;
  client: UpstreamClient;
  breakers: CircuitBreakers;
  /** Instance name -> provider type, as tracing reads it; updated in place. */
  providerTypes?: Map<string, string>;
}

export interface ProviderChanges {
  added: string[];
  changed: string[];
  removed: string[];
}

/** How long a reload waits for the model listings of added or changed instances. */
const listingWaitMs = 5_000;

const sameSettings = (left: ProviderSettings, right: ProviderSettings): boolean => JSON.stringify(left) === JSON.stringify(right);
const originOf = (provider: ProviderSettings): string => new URL(provider.baseUrl).origin;

/** The provider registry in the service list: a hot reload swaps the instances whose settings changed. */
export function providerService(runtime: ProviderRuntime, settings: Settings, logger: Logger): Service<Settings> {
  let current = settings.providers;
  return {
    name: 'providers',
    async applySettings(next) {
      runtime.catalog.replaceDisabled(next.disabledProviders);
      await swapProviders(runtime, current, next.providers, logger);
      current = next.providers;
    },
  };
}

/**
 * Hot reload of `providers`: instances whose settings are unchanged keep their adapter, model
 * listing and circuit; added and changed ones get a new adapter, and the catalog swaps to the
 * new set in one step. Calls in flight finish on the adapter they hold; pools of origins no
 * instance uses any more close once those calls are done. A changed instance starts with a
 * closed circuit (its breaker counted failures of the old settings).
 */
export async function swapProviders(
  runtime: ProviderRuntime,
  current: readonly ProviderSettings[],
  next: readonly ProviderSettings[],
  logger: Logger,
): Promise<ProviderChanges> {
  const before = new Map(current.map((provider) => [provider.name, provider]));
  const after = new Map(next.map((provider) => [provider.name, provider]));
  const changes: ProviderChanges = { added: [], changed: [], removed: [...before.keys()].filter((name) => !after.has(name)) };
  const adapters: ProviderAdapter[] = next.map((provider) => {
    const old = before.get(provider.name);
    const kept = runtime.catalog.instances.get(provider.name)?.adapter;
    if (old !== undefined && kept !== undefined && sameSettings(old, provider)) return kept;
    (old === undefined ? changes.added : changes.changed).push(provider.name);
    const [adapter] = createAdapters([provider], runtime.client);
    if (adapter === undefined) throw new Error(`no adapter for provider ${provider.name}`);
    return adapter;
  });
  if (changes.added.length + changes.changed.length + changes.removed.length === 0) return changes;
  const configured = new Map(next.flatMap((provider) => (provider.models ? [[provider.name, provider.models] as const] : [])));
  await runtime.catalog.replaceAdapters(adapters, configured, listingWaitMs);
  for (const name of [...changes.changed, ...changes.removed]) runtime.breakers.forget(name);
  if (runtime.providerTypes !== undefined) {
    runtime.providerTypes.clear();
    for (const provider of next) runtime.providerTypes.set(provider.name, provider.type);
  }
  const inUse = new Set(next.map(originOf));
  const unused = new Set(current.map(originOf).filter((origin) => !inUse.has(origin)));
  if (unused.size > 0) {
    void runtime.client.retire(unused).then(() => logger.info({ origins: [...unused] }, 'upstream pools of removed providers closed'));
  }
  logger.info(changes, 'providers reloaded');
  return changes;
}
