import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors/gateway-error.ts';
import { assertModelNameLength } from '../routing/model-name.ts';

/**
 * Bounds on the free-text fields of a model request that the gateway keeps (README "Stored
 * fields"): refused with 400 before the route reads anything else, so nothing is planned,
 * counted or stored. `model` over 256 characters is `model_name_too_long` (the route planner
 * checks selectors that come from elsewhere: paths, queries, forms); `user` over 256
 * characters, a `metadata` key over 64 or a string `metadata` value over 512 are `invalid_body`.
 */
export const storedFieldLimits = { user: 256, metadataKey: 64, metadataValue: 512 } as const;

export function registerStoredFieldBounds(scope: FastifyInstance): void {
  scope.addHook('preHandler', (request, _reply, done) => {
    const body = request.body;
    if (typeof body === 'object' && body !== null && !Buffer.isBuffer(body) && !Array.isArray(body)) {
      assertStoredFields(body as Record<string, unknown>);
    }
    done();
  });
}

export function assertStoredFields(body: Record<string, unknown>): void {
  assertModelNameLength(body['model']);
  const user = body['user'];
  if (typeof user === 'string' && user.length > storedFieldLimits.user) {
    throw invalidRequest(`user must be at most ${storedFieldLimits.user} characters`, { code: 'invalid_body', param: 'user' });
  }
  const metadata = body['metadata'];
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return;
  for (const [key, value] of Object.entries(metadata)) {
    if (key.length > storedFieldLimits.metadataKey || (typeof value === 'string' && value.length > storedFieldLimits.metadataValue)) {
      const limits = `keys of at most ${storedFieldLimits.metadataKey} characters, string values of at most ${storedFieldLimits.metadataValue}`;
      throw invalidRequest(`metadata takes ${limits}`, { code: 'invalid_body', param: 'metadata' });
    }
  }
}
