import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors/gateway-error.ts';
import { parseVirtualModelInput, VirtualModelValidationError } from '../routing/virtual-model-validation.ts';
import type { VirtualModel, VirtualModels } from '../routing/virtual-models.ts';
import { invalidParameter, isoTime, objectBody } from './admin-errors.ts';

export function renderVirtualModel(model: VirtualModel) {
  return {
    name: model.name,
    description: model.description,
    strategy: model.strategy,
    targets: model.targets.map((target) => ({ provider: target.provider ?? null, model: target.model, weight: target.weight })),
    origin: model.origin,
    created_at: isoTime(model.createdAt),
    updated_at: isoTime(model.updatedAt),
  };
}

/** `GET|PUT|DELETE /admin/virtual-models` (CONTRACT section 8). */
export function registerVirtualModelRoutes(
  app: FastifyInstance,
  virtualModels: VirtualModels,
  instanceNames: () => readonly string[],
): void {
  app.get('/admin/virtual-models', async () => virtualModels.list().map(renderVirtualModel));

  app.put('/admin/virtual-models', async (request) => {
    // What GET returned may be sent back as is: read-only fields are ignored.
    const { origin: _origin, created_at: _created, updated_at: _updated, ...input } = objectBody(request.body);
    let definition;
    try {
      definition = parseVirtualModelInput(input, '', instanceNames());
    } catch (error) {
      if (error instanceof VirtualModelValidationError) throw invalidParameter(error.field, error.message);
      throw error;
    }
    return renderVirtualModel(await virtualModels.upsert(definition));
  });

  app.delete('/admin/virtual-models', async (request) => {
    const name = objectBody(request.body)['name'];
    if (typeof name !== 'string' || name === '') throw invalidRequest('name is required', { code: 'missing_field', param: 'name' });
    await virtualModels.remove(name);
    return virtualModels.list().map(renderVirtualModel);
  });
}
