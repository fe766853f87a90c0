import type { FastifyInstance } from 'fastify';
import { parseVirtualModelInput, VirtualModelValidationError } from '../routing/virtual-model-validation.ts';
import type { VirtualModel, VirtualModels } from '../routing/virtual-models.ts';
import { invalidParameter, isoTime, objectBody, parseBody } from './admin-errors.ts';
import type { AnswerOf, virtualModelSchema } from './schemas/answers.ts';
import { nameBodySchema } from './schemas/bodies.ts';

export function renderVirtualModel(model: VirtualModel): AnswerOf<typeof virtualModelSchema> {
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
    const { name } = parseBody(nameBodySchema, request.body, { name: 'missing_field' });
    await virtualModels.remove(name);
    return virtualModels.list().map(renderVirtualModel);
  });
}
