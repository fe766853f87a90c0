import type { FastifyInstance } from 'fastify';
import { normalizeUserPathOrThrow } from '../auth/user-path-header.ts';
import type { ApiKeyRow } from '../auth/api-keys/api-key-store.ts';
import type { ApiKeyChanges, ApiKeyService } from '../auth/api-keys/api-key-service.ts';
import { invalidParameter, isoTime, parseBody } from './admin-errors.ts';
import { applyKeyShorthand } from './api-key-shorthand.ts';
import { activityByKey, readActivityWindow } from './api-key-activity.ts';
import type { RequestLogStore } from '../request-log/request-log-store.ts';
import type { AnswerOf, apiKeySchema } from './schemas/answers.ts';
import { apiKeyCreateSchema, apiKeyPatchSchema, apiKeyRotateSchema } from './schemas/bodies.ts';

/**
 * `POST|GET /admin/api-keys`, `PATCH /admin/api-keys/{id}`, `POST /admin/api-keys/{id}/rotate`,
 * `POST /admin/api-keys/{id}/deactivate` (CONTRACT section 3, issue 19). The listing adds each
 * key's `last_used_at`, `requests` and `cost_usd` over `window` from the request log (null
 * when the log is off).
 */
export function registerApiKeyRoutes(app: FastifyInstance, keys: ApiKeyService, requestLog: RequestLogStore | null = null): void {
  const render = (row: ApiKeyRow): AnswerOf<typeof apiKeySchema> => ({
    id: row.id,
    name: row.name,
    redacted: row.redacted,
    user_path: row.userPath,
    active: keys.isActive(row),
    created_at: isoTime(row.createdAt),
    expires_at: isoTime(row.expiresAt),
    deactivated_at: isoTime(row.deactivatedAt),
    allowed_models: row.allowedModels === null ? null : [...row.allowedModels],
    allowed_endpoints: row.allowedEndpoints === null ? null : [...row.allowedEndpoints],
    role: row.role,
    previous_key_expires_at: row.previousExpiresAt !== null && row.previousExpiresAt > Date.now() ? isoTime(row.previousExpiresAt) : null,
  });

  app.post('/admin/api-keys', async (request, reply) => {
    const body = parseBody(apiKeyCreateSchema, request.body, nameCodes);
    const boundPath = typeof body.user_path === 'string' ? normalizeUserPathOrThrow(body.user_path, 'user_path') : null;
    const expiresAt = parseExpiry(body.expires_at);
    await applyKeyShorthand(app, request, body, boundPath);
    const created = await keys.create({
      name: body.name,
      userPath: boundPath,
      expiresAt,
      allowedModels: distinct(body.allowed_models) ?? null,
      allowedEndpoints: distinct(body.allowed_endpoints) ?? null,
      role: body.role ?? 'user',
    });
    return reply.code(201).send({ ...render(created.row), key: created.key });
  });

  app.get('/admin/api-keys', async (request) => {
    const window = readActivityWindow((request.query as Record<string, unknown>)['window']);
    const [rows, activity] = await Promise.all([keys.list(), activityByKey(requestLog, window)]);
    return rows.map((row) => ({ ...render(row), ...activity(row.id) }));
  });

  app.patch<{ Params: { id: string } }>('/admin/api-keys/:id', async (request) => {
    const body = parseBody(apiKeyPatchSchema, request.body, nameCodes);
    const changes: ApiKeyChanges = {};
    if (body.name !== undefined) changes.name = body.name;
    const allowedModels = distinct(body.allowed_models);
    if (allowedModels !== undefined) changes.allowedModels = allowedModels;
    const allowedEndpoints = distinct(body.allowed_endpoints);
    if (allowedEndpoints !== undefined) changes.allowedEndpoints = allowedEndpoints;
    if (body.role !== undefined) changes.role = body.role;
    return render(await keys.update(request.params.id, changes));
  });

  app.post<{ Params: { id: string } }>('/admin/api-keys/:id/rotate', async (request) => {
    const body = request.body === undefined || request.body === null ? {} : parseBody(apiKeyRotateSchema, request.body);
    const rotated = await keys.rotate(request.params.id, body.grace_seconds ?? 0);
    return { ...render(rotated.row), key: rotated.key };
  });

  app.post<{ Params: { id: string } }>('/admin/api-keys/:id/deactivate', async (request) =>
    render(await keys.deactivate(request.params.id)),
  );
}

/** A name that is refused is an `invalid_body`, as before the schemas. */
const nameCodes = { name: 'invalid_body' } as const;

/** An allow list without duplicates (undefined: unchanged, null: no restriction). */
const distinct = (entries: readonly string[] | null | undefined): string[] | null | undefined =>
  entries === undefined || entries === null ? entries : [...new Set(entries)];

function parseExpiry(value: string | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed)) throw invalidParameter('expires_at', 'expires_at must be an ISO date-time');
  if (parsed <= Date.now()) throw invalidParameter('expires_at', 'expires_at must be in the future');
  return parsed;
}
