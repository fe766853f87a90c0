import type { FastifyInstance } from 'fastify';
import type { RateLimiter } from '../ratelimit/rate-limiter.ts';
import type { CircuitBreakers } from '../routing/circuit-breaker.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import { resolveModel } from '../routing/resolve-model.ts';
import type { VirtualModels } from '../routing/virtual-models.ts';
import type { PriceBook } from '../usage/pricing.ts';
import type { AnswerOf, adminModelRowSchema } from './schemas/answers.ts';

export interface ModelRowsDependencies {
  catalog: ModelCatalog;
  virtualModels: VirtualModels;
  breakers: CircuitBreakers;
  limiter: RateLimiter | null;
  prices: PriceBook;
}

/**
 * `GET /admin/models`: a row per concrete model of each instance (pricing, availability) and
 * per virtual model (strategy, targets and whether each is available now).
 */
export function registerAdminModelRoutes(app: FastifyInstance, dependencies: ModelRowsDependencies): void {
  const { catalog, breakers, limiter, prices } = dependencies;
  const available = async (instance: string, model: string): Promise<boolean> =>
    breakers.isAvailable(instance) && ((await limiter?.hasCapacity(instance, model)) ?? true);

  app.get('/admin/models', async () => {
    const rows: Array<AnswerOf<typeof adminModelRowSchema>> = [];
    for (const [instance, listing] of catalog.instances) {
      for (const model of listing.models?.values() ?? []) {
        const price = prices.priceOf(instance, model.id);
        rows.push({
          id: `${instance}/${model.id}`,
          kind: 'concrete',
          instance,
          provider_type: listing.adapter.type,
          model: model.id,
          pricing:
            price === null
              ? null
              : {
                  input_per_mtok: price.inputPerMtok,
                  output_per_mtok: price.outputPerMtok,
                  cached_input_per_mtok: price.cachedInputPerMtok ?? null,
                },
          circuit: breakers.state(instance),
          listing: listing.status,
          available: await available(instance, model.id),
        });
      }
    }
    for (const virtual of dependencies.virtualModels.list()) {
      const targets = await Promise.all(
        virtual.targets.map(async (target) => {
          const resolved = await resolveModel(catalog, target.model, target.provider).catch(() => null);
          const up = resolved === null ? false : await available(resolved.adapter.name, resolved.model);
          return {
            provider: target.provider ?? null,
            model: target.model,
            weight: target.weight,
            resolved: resolved ? `${resolved.adapter.name}/${resolved.model}` : null,
            available: up,
          };
        }),
      );
      rows.push({
        id: virtual.name,
        kind: 'virtual',
        strategy: virtual.strategy,
        origin: virtual.origin,
        targets,
        available: targets.some((target) => target.available),
      });
    }
    return rows;
  });
}
