import { invalidRequest } from '../../errors/gateway-error.ts';
import { servesOpenAiRelays } from '../../providers/provider-types.ts';
import { upstreamErrorOf } from '../../providers/upstream-body.ts';
import type { UpstreamResponse } from '../../providers/upstream-client.ts';
import { failoverTriggers } from '../../routing/failover-rule.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import type { RoutePlan } from '../../routing/route-planner.ts';
import type { RequestContext } from '../request-context.ts';

/**
 * Pieces shared by OpenAI's endpoints that the gateway relays to an OpenAI-wire upstream as
 * they are (legacy completions, moderations, images): which instances take them, where a
 * request without a `model` goes, and one attempt on one target.
 */

/** The usage records' model of a request sent without one (the upstream applies its own default). */
export const upstreamDefaultModel = 'default';

/** Whether the target's instance takes OpenAI's relayed endpoints (an `anthropic` one does not). */
export const servesRelays = (target: ResolvedTarget): boolean => servesOpenAiRelays(target.adapter.type);

/**
 * The plan of a request without a `model` (OpenAI makes it optional on moderations and
 * images): the instance the `provider` hint names, else the first configured instance that
 * takes these endpoints; the body goes upstream without a model.
 */
export function defaultModelPlan(catalog: ModelCatalog, hint: string | undefined): RoutePlan {
  const listing =
    hint === undefined
      ? [...catalog.instances.values()].find((entry) => servesOpenAiRelays(entry.adapter.type))
      : catalog.instances.get(hint);
  if (listing === undefined) {
    throw hint === undefined
      ? invalidRequest('you must provide a model parameter', { code: 'missing_field', param: 'model' })
      : invalidRequest(`unknown provider "${hint}": no configured instance has that name`, { code: 'unknown_provider', param: 'provider' });
  }
  const target = { adapter: listing.adapter, model: upstreamDefaultModel };
  return {
    candidates: [target],
    virtualModel: null,
    cacheTarget: `${listing.adapter.name}/${upstreamDefaultModel}`,
    failoverOn: failoverTriggers,
  };
}

/** The `provider` hint of a JSON body or form: absent, or the name of an instance. */
export function readHint(hint: unknown): string | undefined {
  if (hint === undefined || hint === null) return undefined;
  if (typeof hint !== 'string' || hint === '') {
    throw invalidRequest('provider must be the name of a provider instance', { code: 'invalid_body', param: 'provider' });
  }
  return hint;
}

/** One attempt: the body relayed to `path` under the target's base URL; an upstream error fails the attempt. */
export async function forwardToTarget(
  target: ResolvedTarget,
  path: string,
  contentType: string,
  body: string | Buffer,
  context: RequestContext,
): Promise<UpstreamResponse> {
  const response = await target.adapter.forward(
    { method: 'POST', path, headers: { 'content-type': contentType }, body },
    { signal: context.signal, requestId: context.requestId },
  );
  if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, target.adapter.name);
  return response;
}
