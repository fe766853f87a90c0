import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors/gateway-error.ts';
import { normalizeUserPathOrThrow } from '../http/user-path.ts';
import type { ApiKeyRow } from '../keys/api-key-store.ts';
import type { ApiKeyChanges, ApiKeyService } from '../keys/api-key-service.ts';
import { invalidParameter, isoTime, objectBody } from './admin-errors.ts';
import { readAllowList, readGraceSeconds, readRole } from './api-key-access.ts';
import { applyKeyShorthand } from './api-key-shorthand.ts';
import { activityByKey, readActivityWindow } from './api-key-activity.ts';
import type { RequestLogStore } from '../request-log/request-log-store.ts';

const maximumNameLength = 200;

/**
 * `POST|GET /admin/api-keys`, `PATCH /admin/api-keys/{id}`, `POST /admin/api-keys/{id}/rotate`,
 * `POST /admin/api-keys/{id}/deactivate` (CONTRACT section 3, issue 19). The listing adds each
 * key's `last_used_at`, `requests` and `cost_usd` over `window` from the request log (null
 * when the log is off).
 */
export function registerApiKeyRoutes(app: FastifyInstance, keys: ApiKeyService, requestLog: RequestLogStore | null = null): void {
  const render = (row: ApiKeyRow) => renderKey(keys, row);

  app.post('/admin/api-keys', async (request, reply) => {
    const body = objectBody(request.body);
    const name = readName(body['name']);
    const userPath = body['user_path'];
    if (userPath !== undefined && userPath !== null && typeof userPath !== 'string')
      throw invalidParameter('user_path', 'user_path must be a string');
    const boundPath = typeof userPath === 'string' ? normalizeUserPathOrThrow(userPath, 'user_path') : null;
    const access = {
      allowedModels: readAllowList(body, 'allowed_models') ?? null,
      allowedEndpoints: readAllowList(body, 'allowed_endpoints') ?? null,
    };
    const role = readRole(body) ?? 'user';
    const expiresAt = parseExpiry(body['expires_at']);
    await applyKeyShorthand(app, request, body, boundPath);
    const created = await keys.create({
      name,
      userPath: boundPath,
      expiresAt,
      ...access,
      role,
    });
    return reply.code(201).send({ ...render(created.row), key: created.key });
  });

  app.get('/admin/api-keys', async (request) => {
    const window = readActivityWindow((request.query as Record<string, unknown>)['window']);
    const [rows, activity] = await Promise.all([keys.list(), activityByKey(requestLog, window)]);
    return rows.map((row) => ({ ...render(row), ...activity(row.id) }));
  });

  app.patch<{ Params: { id: string } }>('/admin/api-keys/:id', async (request) => {
    const body = objectBody(request.body);
    const changes: ApiKeyChanges = {};
    if (body['name'] !== undefined) changes.name = readName(body['name']);
    const allowedModels = readAllowList(body, 'allowed_models');
    if (allowedModels !== undefined) changes.allowedModels = allowedModels;
    const allowedEndpoints = readAllowList(body, 'allowed_endpoints');
    if (allowedEndpoints !== undefined) changes.allowedEndpoints = allowedEndpoints;
    const role = readRole(body);
    if (role !== undefined) changes.role = role;
    return render(await keys.update(request.params.id, changes));
  });

  app.post<{ Params: { id: string } }>('/admin/api-keys/:id/rotate', async (request) => {
    const body = request.body === undefined || request.body === null ? {} : objectBody(request.body);
    const rotated = await keys.rotate(request.params.id, readGraceSeconds(body));
    return { ...render(rotated.row), key: rotated.key };
  });

  app.post<{ Params: { id: string } }>('/admin/api-keys/:id/deactivate', async (request) =>
    render(await keys.deactivate(request.params.id)),
  );
}

function renderKey(keys: ApiKeyService, row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    redacted: row.redacted,
    user_path: row.userPath,
    active: keys.isActive(row),
    created_at: isoTime(row.createdAt),
    expires_at: isoTime(row.expiresAt),
    deactivated_at: isoTime(row.deactivatedAt),
    allowed_models: row.allowedModels,
    allowed_endpoints: row.allowedEndpoints,
    role: row.role,
    previous_key_expires_at: row.previousExpiresAt !== null && row.previousExpiresAt > Date.now() ? isoTime(row.previousExpiresAt) : null,
  };
}

function readName(name: unknown): string {
  if (typeof name !== 'string' || name.trim() === '' || name.length > maximumNameLength) {
    throw invalidRequest(`name must be a non-empty string of at most ${maximumNameLength} characters`, {
      code: 'invalid_body',
      param: 'name',
    });
  }
  return name.trim();
}

function parseExpiry(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  const parsed = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(parsed)) throw invalidParameter('expires_at', 'expires_at must be an ISO date-time');
  if (parsed <= Date.now()) throw invalidParameter('expires_at', 'expires_at must be in the future');
  return parsed;
}
