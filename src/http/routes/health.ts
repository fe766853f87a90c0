import type { FastifyInstance } from 'fastify';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { ResponseCache } from '../../cache/response-cache-service.ts';
import type { CounterStoreStatus } from '../../ratelimit/resilient-counter-store.ts';
import type { Storage } from '../../storage/storage.ts';

/** The shared rate-limit counter store, asked afresh on each readiness check. */
export interface RateLimitStoreHealth {
  check(): Promise<CounterStoreStatus>;
}

/**
 * `/health` (liveness) and `/health/ready` (what the gateway depends on). No auth. Storage
 * down -> 503 `not_ready`; no models loaded while providers are configured, a provider
 * instance disabled for a missing setting (listed with `status: "disabled"` and a `reason`), the response
 * cache or the shared rate-limit store (Redis) not answering -> `degraded` (still 200: every
 * replica shares the same Redis, so taking one out of a load balancer would not help).
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  catalog: ModelCatalog,
  storage: Storage,
  cache: ResponseCache | null,
  rateLimitStore: RateLimitStoreHealth | null = null,
): void {
  app.get('/health', async () => ({ status: 'ok' }));

  app.get('/health/ready', async (_request, reply) => {
    const [storageUp, cacheUp, counters] = await Promise.all([
      storage.ping(),
      cache?.ping() ?? Promise.resolve(null),
      rateLimitStore?.check() ?? Promise.resolve(null),
    ]);
    const providers = Object.fromEntries([
      ...[...catalog.instances.entries()].map(([name, listing]) => [
        name,
        { status: listing.status, models: listing.models?.size ?? 0, ...(listing.lastError ? { error: listing.lastError } : {}) },
      ]),
      // Declared but dropped for a missing setting: the reason names it (requests for its models answer 503).
      ...[...catalog.disabled.values()].map((instance) => [
        instance.name,
        { status: 'disabled', models: 0, reason: instance.reason, setting: instance.setting },
      ]),
    ]);
    const modelCount = [...catalog.instances.values()].reduce((total, listing) => total + (listing.models?.size ?? 0), 0);
    const modelsUp = catalog.instances.size === 0 || modelCount > 0;
    // A cache that does not answer only costs hits (requests go upstream): degraded, not down.
    const countersUp = counters?.available ?? true;
    const allEnabled = catalog.disabled.size === 0;
    const status = !storageUp ? 'not_ready' : modelsUp && allEnabled && cacheUp !== false && countersUp ? 'ready' : 'degraded';
    return reply.code(storageUp ? 200 : 503).send({
      status,
      components: {
        storage: { status: storageUp ? 'up' : 'down', type: storage.kind },
        models: { status: modelsUp ? 'up' : 'down', count: modelCount, providers },
        ...(cacheUp === null ? {} : { response_cache: { status: cacheUp ? 'up' : 'down' } }),
        ...(counters === null ? {} : { rate_limits: rateLimitComponent(counters) }),
      },
    });
  });
}

/** `up`, or `down` with what the gateway does meanwhile (RATE_LIMITS_FAIL_MODE). */
function rateLimitComponent(counters: CounterStoreStatus) {
  return {
    status: counters.available ? 'up' : 'down',
    store: counters.store,
    fail_mode: counters.failMode,
    ...(counters.available ? {} : { counting: counters.failMode === 'open' ? 'local' : 'refused' }),
  };
}
