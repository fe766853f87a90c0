import { closestNames } from '../core/closest-names.ts';
import { GatewayError, invalidRequest, notFound } from '../errors/gateway-error.ts';
import type { ProviderAdapter } from '../providers/provider.ts';
import type { DisabledInstance, ModelCatalog } from './model-catalog.ts';

export interface ResolvedTarget {
  adapter: ProviderAdapter;
  /** The bare model id sent upstream. */
  model: string;
}

const onDemandRefreshAfterMs = 10_000;

/**
 * Resolves a model selector (CONTRACT section 2): `<instance>/<model>` when the prefix is a
 * configured instance, else a bare id served by the first instance listing it. `hint` is the
 * body's `provider` field. A qualified selector missing from a listing older than ten seconds
 * refreshes that listing once before it is refused.
 */
export async function resolveModel(catalog: ModelCatalog, selector: string, hint: string | undefined): Promise<ResolvedTarget> {
  const listed = resolveListedModel(catalog, selector, hint);
  if (listed !== null) return listed;
  // A qualified selector whose instance's listing lacks the model (both exist: checked above).
  const qualified = splitQualified(catalog, selector, hint);
  const listing = qualified === null ? undefined : catalog.instances.get(qualified.instance);
  if (qualified === null || listing === undefined) throw modelNotFound(catalog, selector);
  const { instance, model } = qualified;
  if (listing.status !== 'configured' && catalog.age(instance) > onDemandRefreshAfterMs) {
    await catalog.refresh(instance);
    if (listing.models?.has(model)) return { adapter: listing.adapter, model };
  }
  throw modelNotFound(catalog, selector);
}

/**
 * `resolveModel` without waiting: the target as the listings stand, or null for a qualified
 * selector its instance's listing lacks (which `resolveModel` may refresh first). It throws
 * what `resolveModel` would for an unknown instance or bare id.
 */
export function resolveListedModel(catalog: ModelCatalog, selector: string, hint: string | undefined): ResolvedTarget | null {
  const qualified = splitQualified(catalog, selector, hint);
  if (qualified === null) return resolveBare(catalog, selector);
  const { instance, model } = qualified;
  const listing = catalog.instances.get(instance);
  if (listing === undefined) throw unknownProvider(instance);
  return listing.models === null || listing.models.has(model) ? { adapter: listing.adapter, model } : null;
}

function splitQualified(catalog: ModelCatalog, selector: string, hint: string | undefined): { instance: string; model: string } | null {
  if (hint !== undefined) {
    if (!catalog.instances.has(hint)) throw unavailableOr(catalog.disabled.get(hint), () => unknownProvider(hint));
    const prefix = `${hint}/`;
    return { instance: hint, model: selector.startsWith(prefix) ? selector.slice(prefix.length) : selector };
  }
  const slash = selector.indexOf('/');
  if (slash <= 0) return null;
  const instance = selector.slice(0, slash);
  const model = selector.slice(slash + 1);
  return catalog.instances.has(instance) && model !== '' ? { instance, model } : null;
}

function resolveBare(catalog: ModelCatalog, selector: string): ResolvedTarget {
  for (const listing of catalog.instances.values()) {
    if (listing.models?.has(selector)) return { adapter: listing.adapter, model: selector };
  }
  throw unavailableOr(droppedServing(catalog, selector), () => modelNotFound(catalog, selector));
}

/** The dropped instance a selector names (`<instance>/<model>`), or the first whose configured models list it. */
function droppedServing(catalog: ModelCatalog, selector: string): DisabledInstance | undefined {
  if (catalog.disabled.size === 0) return undefined;
  const slash = selector.indexOf('/');
  const named = slash > 0 ? catalog.disabled.get(selector.slice(0, slash)) : undefined;
  if (named !== undefined) return named;
  for (const instance of catalog.disabled.values()) if (instance.models?.includes(selector)) return instance;
  return undefined;
}

function unavailableOr(instance: DisabledInstance | undefined, otherwise: () => GatewayError): GatewayError {
  if (instance === undefined) return otherwise();
  return new GatewayError(
    'provider_error',
    `provider instance "${instance.name}" is disabled: ${instance.reason}; set ${instance.setting}`,
    {
      status: 503,
      code: 'provider_unavailable',
      param: 'model',
    },
  );
}

function unknownProvider(name: string) {
  return invalidRequest(`unknown provider "${name}": no configured instance has that name`, {
    code: 'unknown_provider',
    param: 'provider',
  });
}

/** 404 `model_not_found`, with the listed models closest to the selector (bare ids for a bare selector). */
export function modelNotFound(catalog: ModelCatalog, selector: string): GatewayError {
  return notFound(`model "${selector}" is not served by any configured provider`, {
    code: 'model_not_found',
    param: 'model',
    suggestions: closestNames(selector, listedNames(catalog, selector.includes('/'))),
  });
}

function* listedNames(catalog: ModelCatalog, qualified: boolean): Generator<string> {
  for (const [name, listing] of catalog.instances) {
    for (const model of listing.models?.keys() ?? []) yield qualified ? `${name}/${model}` : model;
  }
}
