import { GatewayError } from '../errors/gateway-error.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import { modelNotFound, resolveModel } from '../routing/resolve-model.ts';
import type { VirtualModels } from '../routing/virtual-models.ts';

/** One entry of `GET /v1/models`, in OpenAI's model object shape. */
export interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/**
 * `GET /v1/models/{id}`: the model `id` names as `GET /v1/models` would list it. A virtual
 * model by its name; `<instance>/<model>` and a bare id resolved as a request's `model` is
 * (the bare id served by the first instance that lists it), but only a model its instance
 * lists is found: anything else is 404 `model_not_found`.
 */
export async function lookUpModel(id: string, catalog: ModelCatalog, virtualModels: VirtualModels): Promise<ModelEntry> {
  const virtual = virtualModels.get(id);
  if (virtual !== undefined) {
    return { id: virtual.name, object: 'model', created: Math.floor(virtual.createdAt / 1000), owned_by: 'virtual' };
  }
  const target = await resolveModel(catalog, id, undefined).catch((error: unknown) => {
    if (error instanceof GatewayError && error.status < 500) return null;
    throw error;
  });
  const listed = target === null ? undefined : catalog.instances.get(target.adapter.name)?.models?.get(target.model);
  if (target === null || listed === undefined) {
    throw modelNotFound(catalog, id);
  }
  return { id, object: 'model', created: listed.created ?? 0, owned_by: target.adapter.name };
}

/**
 * `GET /v1/models`: every instance's models as `<instance>/<model>`, in configuration order,
 * then every virtual model by its name, whatever the state of its targets.
 */
export function listModels(catalog: ModelCatalog, virtualModels: VirtualModels): ModelEntry[] {
  const data: ModelEntry[] = [];
  for (const [name, listing] of catalog.instances) {
    for (const model of listing.models?.values() ?? []) {
      data.push({ id: `${name}/${model.id}`, object: 'model', created: model.created ?? 0, owned_by: name });
    }
  }
  for (const virtual of virtualModels.list()) {
    data.push({ id: virtual.name, object: 'model', created: Math.floor(virtual.createdAt / 1000), owned_by: 'virtual' });
  }
  return data;
}

/** The model id of a `/v1/models/{id}` URL: everything after the prefix, raw (`a/b`) or percent-encoded (`a%2Fb`). */
export function modelIdOf(url: string, prefix: string): string {
  const queryStart = url.indexOf('?');
  const raw = (queryStart === -1 ? url : url.slice(0, queryStart)).slice(prefix.length);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
