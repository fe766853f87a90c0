import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors/gateway-error.ts';
import { normalizeUserPathOrThrow } from '../http/user-path.ts';
import type { ApiKeyRow } from '../keys/api-key-store.ts';
import type { ApiKeyService } from '../keys/api-key-service.ts';
import { invalidParameter, isoTime, objectBody } from './admin-errors.ts';

const maximumNameLength = 200;

/** `POST|GET /admin/api-keys`, `POST /admin/api-keys/{id}/deactivate` (CONTRACT section 3). */
export function registerApiKeyRoutes(app: FastifyInstance, keys: ApiKeyService): void {
  const render = (row: ApiKeyRow) => ({
    id: row.id,
    name: row.name,
    redacted: row.redacted,
    user_path: row.userPath,
    active: keys.isActive(row),
    created_at: isoTime(row.createdAt),
    expires_at: isoTime(row.expiresAt),
    deactivated_at: isoTime(row.deactivatedAt),
  });

  app.post('/admin/api-keys', async (request, reply) => {
    const body = objectBody(request.body);
    const name = body['name'];
    if (typeof name !== 'string' || name.trim() === '' || name.length > maximumNameLength) {
      throw invalidRequest(`name must be a non-empty string of at most ${maximumNameLength} characters`, {
        code: 'invalid_body',
        param: 'name',
      });
    }
    const userPath = body['user_path'];
    if (userPath !== undefined && userPath !== null && typeof userPath !== 'string')
      throw invalidParameter('user_path', 'user_path must be a string');
    const created = await keys.create({
      name: name.trim(),
      userPath: typeof userPath === 'string' ? normalizeUserPathOrThrow(userPath, 'user_path') : null,
      expiresAt: parseExpiry(body['expires_at']),
    });
    return reply.code(201).send({ ...render(created.row), key: created.key });
  });

  app.get('/admin/api-keys', async () => (await keys.list()).map(render));

  app.post<{ Params: { id: string } }>('/admin/api-keys/:id/deactivate', async (request) =>
    render(await keys.deactivate(request.params.id)),
  );
}

function parseExpiry(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  const parsed = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(parsed)) throw invalidParameter('expires_at', 'expires_at must be an ISO date-time');
  if (parsed <= Date.now()) throw invalidParameter('expires_at', 'expires_at must be in the future');
  return parsed;
}
