import type { FastifyInstance } from 'fastify';
import type { ModelCatalog } from '../../routing/model-catalog.ts';

interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/** `GET /v1/models`: every instance's models as `<instance>/<model>`, in configuration order. */
export function registerModelRoutes(app: FastifyInstance, catalog: ModelCatalog): void {
  app.get('/v1/models', async () => {
    const data: ModelEntry[] = [];
    for (const [name, listing] of catalog.instances) {
      for (const model of listing.models?.values() ?? []) {
        data.push({ id: `${name}/${model.id}`, object: 'model', created: model.created ?? 0, owned_by: name });
      }
    }
    return { object: 'list', data };
  });
}
