import type { FastifyInstance } from 'fastify';
import { lookUpModel, modelIdOf, type ModelEntry } from '../../gateway/model-lookup.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { VirtualModels } from '../../routing/virtual-models.ts';

/**
 * `GET /v1/models`: every instance's models as `<instance>/<model>`, in configuration order,
 * then every virtual model by its name, whatever the state of its targets.
 */
export function registerModelRoutes(app: FastifyInstance, catalog: ModelCatalog, virtualModels: VirtualModels): void {
  app.get('/v1/models', async () => {
    const data: ModelEntry[] = [];
    for (const [name, listing] of catalog.instances) {
      for (const model of listing.models?.values() ?? []) {
        data.push({ id: `${name}/${model.id}`, object: 'model', created: model.created ?? 0, owned_by: name });
      }
    }
    for (const virtual of virtualModels.list()) {
      data.push({ id: virtual.name, object: 'model', created: Math.floor(virtual.createdAt / 1000), owned_by: 'virtual' });
    }
    return { object: 'list', data };
  });
  // `GET /v1/models/{id}` (openai `models.retrieve`): the id may hold `/`, raw or as %2F.
  app.get('/v1/models/*', async (request) => lookUpModel(modelIdOf(request.url, '/v1/models/'), catalog, virtualModels));
}
