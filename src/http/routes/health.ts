import type { FastifyInstance } from 'fastify';
import type { ModelCatalog } from '../../routing/model-catalog.ts';

/** `/health` (liveness) and `/health/ready` (what the gateway depends on). No auth. */
export function registerHealthRoutes(app: FastifyInstance, catalog: ModelCatalog): void {
  app.get('/health', async () => ({ status: 'ok' }));

  app.get('/health/ready', async () => {
    const providers = Object.fromEntries(
      [...catalog.instances.entries()].map(([name, listing]) => [
        name,
        { status: listing.status, models: listing.models?.size ?? 0, ...(listing.lastError ? { error: listing.lastError } : {}) },
      ]),
    );
    const modelCount = [...catalog.instances.values()].reduce((total, listing) => total + (listing.models?.size ?? 0), 0);
    const modelsUp = catalog.instances.size === 0 || modelCount > 0;
    return {
      status: modelsUp ? 'ready' : 'degraded',
      components: { models: { status: modelsUp ? 'up' : 'down', count: modelCount, providers } },
    };
  });
}
