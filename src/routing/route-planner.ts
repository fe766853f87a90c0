import { GatewayError, notFound } from '../errors/gateway-error.ts';
import type { RateLimiter } from '../ratelimit/rate-limiter.ts';
import type { CircuitBreakers } from './circuit-breaker.ts';
import type { InFlightCounter } from './in-flight.ts';
import type { ModelCatalog } from './model-catalog.ts';
import { resolveModel, type ResolvedTarget } from './resolve-model.ts';
import type { VirtualModel, VirtualModels } from './virtual-models.ts';

/** Targets to try in order: the first one chosen by the strategy, then failover candidates. */
export interface RoutePlan {
  readonly candidates: readonly ResolvedTarget[];
  /** The virtual model the selector named, if any. */
  readonly virtualModel: string | null;
  /** What the response cache keys the request by: `<instance>/<model>` or `virtual:<name>`. */
  readonly cacheTarget: string;
}

export interface PlannerDependencies {
  catalog: ModelCatalog;
  virtualModels: VirtualModels | null;
  limiter: RateLimiter | null;
  breakers: CircuitBreakers;
  inFlight: InFlightCounter;
}

export const targetKey = (target: ResolvedTarget): string => `${target.adapter.name}/${target.model}`;

/**
 * Routing as data (STYLE habit 7). A `provider` hint or a concrete selector gives one target.
 * A virtual model's targets are resolved, those with an open circuit or a saturated provider
 * or model rule are set aside, the strategy picks among the rest and the others follow in
 * declared order for failover. When none is available the first declared target is planned
 * alone, so the client gets the honest 429 (with Retry-After) rather than "unavailable".
 */
export async function planRoute(selector: string, hint: string | undefined, dependencies: PlannerDependencies): Promise<RoutePlan> {
  const virtual = hint === undefined ? dependencies.virtualModels?.get(selector) : undefined;
  if (virtual === undefined) {
    const target = await resolveModel(dependencies.catalog, selector, hint);
    return { candidates: [target], virtualModel: null, cacheTarget: targetKey(target) };
  }
  const targets = await resolveTargets(virtual, dependencies.catalog);
  if (targets.length === 0) {
    throw notFound(`virtual model "${virtual.name}" has no target served by a configured provider`, {
      code: 'model_not_found',
      param: 'model',
    });
  }
  const available = await Promise.all(
    targets.map(async (target) =>
      target === null
        ? false
        : dependencies.breakers.isAvailable(target.adapter.name) &&
          ((await dependencies.limiter?.hasCapacity(target.adapter.name, target.model)) ?? true),
    ),
  );
  const chosen = choose(virtual, targets, available, dependencies);
  const first = targets.find((target) => target !== null) as ResolvedTarget;
  if (chosen === -1) return { candidates: [first], virtualModel: virtual.name, cacheTarget: `virtual:${virtual.name}` };
  const ordered = [chosen, ...targets.map((_target, index) => index).filter((index) => index !== chosen && available[index])];
  const seen = new Set<string>();
  const candidates = ordered.flatMap((index) => {
    const target = targets[index];
    if (target === null || target === undefined || seen.has(targetKey(target))) return [];
    seen.add(targetKey(target));
    return [target];
  });
  return { candidates, virtualModel: virtual.name, cacheTarget: `virtual:${virtual.name}` };
}

/** Each declared target resolved, or null when no configured instance serves it. */
async function resolveTargets(virtual: VirtualModel, catalog: ModelCatalog): Promise<Array<ResolvedTarget | null>> {
  return Promise.all(
    virtual.targets.map(async (target) => {
      try {
        return await resolveModel(catalog, target.model, target.provider);
      } catch (error) {
        if (error instanceof GatewayError && error.status < 500) return null;
        throw error;
      }
    }),
  );
}

function choose(
  virtual: VirtualModel,
  targets: Array<ResolvedTarget | null>,
  available: boolean[],
  dependencies: PlannerDependencies,
): number {
  if (virtual.strategy === 'failover') return available.indexOf(true);
  if (virtual.strategy === 'least_busy') {
    let best = -1;
    targets.forEach((target, index) => {
      if (target === null || !available[index]) return;
      const bestTarget = targets[best];
      if (best === -1 || (bestTarget && dependencies.inFlight.get(targetKey(target)) < dependencies.inFlight.get(targetKey(bestTarget))))
        best = index;
    });
    return best;
  }
  return dependencies.virtualModels?.pickRoundRobin(virtual, available) ?? -1;
}
