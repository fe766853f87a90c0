import type { FastifyInstance } from 'fastify';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { ResponseCache } from '../../cache/response-cache-service.ts';
import type { Storage } from '../../storage/storage.ts';

/**
 * `/health` (liveness) and `/health/ready` (what the gateway depends on). No auth. Storage
 * down -> 503 `not_ready`; no models loaded while providers are configured -> `degraded`.
 */
export function registerHealthRoutes(app: FastifyInstance, catalog: ModelCatalog, storage: Storage, cache: ResponseCache | null): void {
  app.get('/health', async () => ({ status: 'ok' }));

  app.get('/health/ready', async (_request, reply) => {
    const [storageUp, cacheUp] = await Promise.all([storage.ping(), cache?.ping() ?? Promise.resolve(null)]);
    const providers = Object.fromEntries(
      [...catalog.instances.entries()].map(([name, listing]) => [
        name,
        { status: listing.status, models: listing.models?.size ?? 0, ...(listing.lastError ? { error: listing.lastError } : {}) },
      ]),
    );
    const modelCount = [...catalog.instances.values()].reduce((total, listing) => total + (listing.models?.size ?? 0), 0);
    const modelsUp = catalog.instances.size === 0 || modelCount > 0;
    // A cache that does not answer only costs hits (requests go upstream): degraded, not down.
    const status = !storageUp ? 'not_ready' : modelsUp && cacheUp !== false ? 'ready' : 'degraded';
    return reply.code(storageUp ? 200 : 503).send({
      status,
      components: {
        storage: { status: storageUp ? 'up' : 'down', type: storage.kind },
        models: { status: modelsUp ? 'up' : 'down', count: modelCount, providers },
        ...(cacheUp === null ? {} : { response_cache: { status: cacheUp ? 'up' : 'down' } }),
      },
    });
  });
}
