import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { timeOrderedUuid } from '../core/time-ordered-id.ts';
import type { Principal } from '../auth/principal.ts';
import type { AuditStore } from './audit-store.ts';
import { changedItems, listItems } from './audit-diff.ts';

export interface AdminAuditOptions {
  store: AuditStore;
  logger: Logger;
  now?: () => number;
}

interface PendingChange {
  readonly collection: string;
  readonly before: unknown[] | null;
}

const readMethods = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Credentials the snapshot reads present again (the same caller reads the collection). */
const forwardedHeaders = ['authorization', 'x-api-key', 'x-goog-api-key', 'host', 'origin'];

/**
 * One hook point for the admin audit trail: every successful non-GET request under /admin is
 * recorded with who, when, what, and the items of its collection that it changed. Before the
 * handler runs, the collection is read through its own `GET /admin/<collection>` (the views
 * the admin API shows, secrets already redacted there); after it, once more, and the items
 * that differ are kept. The entry is written before the response leaves: a success answered
 * to the client is in the trail (a failed write is logged at error level).
 */
export function installAdminAudit(admin: FastifyInstance, options: AdminAuditOptions): void {
  const pending = new WeakMap<FastifyRequest, PendingChange>();
  const now = options.now ?? Date.now;

  admin.addHook('preHandler', async (request) => {
    if (readMethods.has(request.method)) return;
    const route = request.routeOptions.url;
    const collection = route === undefined ? null : collectionOf(route);
    if (collection === null || collection === 'audit') return;
    pending.set(request, { collection, before: await snapshot(admin, request, collection) });
  });

  admin.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const change = pending.get(request);
    if (change === undefined || reply.statusCode >= 400) return payload;
    pending.delete(request);
    try {
      const after = await snapshot(admin, request, change.collection);
      const diff = changedItems(change.before, after);
      const time = now();
      await options.store.insert({
        id: timeOrderedUuid(time),
        time,
        actor: actorOf(request.principal),
        action: actionOf(request.method, routeOf(request)),
        resource: resourceOf(change.collection, request.params, diff.identity),
        before: diff.before,
        after: diff.after,
      });
    } catch (error) {
      options.logger.error({ err: error, request_id: request.id, url: request.url }, 'admin audit entry could not be written');
    }
    return payload;
  });
}

const routeOf = (request: FastifyRequest): string => request.routeOptions.url ?? '';

/** `/admin/budgets` -> `budgets`; `/admin/api-keys/:id/rotate` -> `api-keys`. */
function collectionOf(route: string): string | null {
  const match = /^\/admin\/([a-z0-9-]+)/.exec(route);
  return match?.[1] ?? null;
}

/** The last literal segment after the collection (`rotate`, `reset-one`), else the method's verb. */
export function actionOf(method: string, route: string): string {
  const segments = route.split('/').slice(3);
  const literal = segments.filter((segment) => !segment.startsWith(':')).at(-1);
  if (literal !== undefined && literal !== '') return literal;
  const verbs: Record<string, string> = { POST: 'create', PUT: 'upsert', PATCH: 'update', DELETE: 'delete' };
  return verbs[method] ?? method.toLowerCase();
}

function resourceOf(collection: string, params: unknown, identity: string | null): string {
  const values = typeof params === 'object' && params !== null ? Object.values(params as Record<string, unknown>) : [];
  const named = values.find((value): value is string => typeof value === 'string' && value !== '') ?? identity;
  return named === null ? collection : `${collection}/${named}`;
}

export function actorOf(principal: Principal | null): string {
  if (principal === null) return 'unknown';
  if (principal.kind === 'api_key') return principal.keyId ?? 'api_key';
  if (principal.kind === 'jwt') return `jwt:${principal.subject ?? 'unknown'}`;
  return principal.kind;
}

/** The caller's credentials (and host and origin, for open mode), to make an inner admin call as them. */
export function forwardedCredentials(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of forwardedHeaders) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

async function snapshot(admin: FastifyInstance, request: FastifyRequest, collection: string): Promise<unknown[] | null> {
  const response = await admin.inject({ method: 'GET', url: `/admin/${collection}`, headers: forwardedCredentials(request) });
  if (response.statusCode !== 200) return null;
  return listItems(response.json());
}
