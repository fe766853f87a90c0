import { invalidRequest } from '../../errors/gateway-error.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import { servesResponsesApi } from '../../providers/provider-types.ts';
import { failoverTriggers } from '../../routing/failover-rule.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { RoutePlan } from '../../routing/route-planner.ts';
import { upstreamDefaultModel } from '../relay/model-relay.ts';

/** An instance marked to receive resource calls without a hint (instance option `resources_default: true`). */
const isResourcesDefault = (adapter: ProviderAdapter): boolean => adapter.resourcesDefault === true;

/**
 * The plan of a Responses request without a `model` (a stored prompt names its own): the
 * instance the `provider` hint names, else the instance marked `resources_default`, else the
 * first instance with OpenAI's Responses API; the body goes upstream without a model, on the
 * native path only. No such instance: the 400 of a request without a model.
 */
export function promptPlan(catalog: ModelCatalog, hint: string | undefined): RoutePlan {
  const native = [...catalog.instances.values()].map((listing) => listing.adapter).filter((adapter) => servesResponsesApi(adapter.type));
  if (hint !== undefined && !catalog.instances.has(hint)) {
    throw invalidRequest(`unknown provider "${hint}": no configured instance has that name`, {
      code: 'unknown_provider',
      param: 'provider',
    });
  }
  const adapter = hint === undefined ? (native.find(isResourcesDefault) ?? native[0]) : native.find((candidate) => candidate.name === hint);
  if (adapter === undefined) throw missingModel();
  const target = { adapter, model: upstreamDefaultModel };
  return { candidates: [target], virtualModel: null, cacheTarget: `${adapter.name}/${upstreamDefaultModel}`, failoverOn: failoverTriggers };
}

export const missingModel = (): Error => invalidRequest('you must provide a model parameter', { code: 'missing_field', param: 'model' });
