import type { FastifyInstance } from 'fastify';
import { listedModelAllowed } from '../../auth/allowlist.ts';
import { notFound } from '../../errors/gateway-error.ts';
import { listModels, lookUpModel, modelIdOf } from '../../gateway/model-lookup.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { VirtualModels } from '../../routing/virtual-models.ts';

/**
 * `GET /v1/models`: every instance's models as `<instance>/<model>`, in configuration order,
 * then every virtual model by its name, whatever the state of its targets; only what the
 * caller's model allowlist allows.
 */
export function registerModelRoutes(app: FastifyInstance, catalog: ModelCatalog, virtualModels: VirtualModels): void {
  app.get('/v1/models', async (request) => ({
    object: 'list',
    data: listModels(catalog, virtualModels).filter((entry) => listedModelAllowed(request.principal, entry, virtualModels)),
  }));
  // `GET /v1/models/{id}` (openai `models.retrieve`): the id may hold `/`, raw or as %2F. A model
  // outside the caller's allowlist is 404 like one that does not exist (issue 19).
  app.get('/v1/models/*', async (request) => {
    const id = modelIdOf(request.url, '/v1/models/');
    const entry = await lookUpModel(id, catalog, virtualModels);
    if (listedModelAllowed(request.principal, entry, virtualModels)) return entry;
    throw notFound(`model "${id}" is not served by any configured provider`, { code: 'model_not_found', param: 'model' });
  });
}
