import type { FastifyInstance } from 'fastify';
import type { AuditEntry, AuditQuery, AuditStore } from '../audit/audit-store.ts';
import { invalidParameter, isoTime } from './admin-errors.ts';
import type { AnswerOf, auditEntrySchema } from './schemas/answers.ts';

const defaultLimit = 100;
const maximumLimit = 500;
const cursorPattern = /^[0-9a-f-]{36}$/;

/**
 * `GET /admin/audit` (issue 19): newest first, filtered by `from`/`to` (ISO date-times),
 * `actor`, `action` and `resource` (a collection such as `api-keys` also matches its items),
 * `limit` (1-500, default 100), and `cursor` (the previous page's `next_cursor`).
 */
export function registerAuditRoutes(app: FastifyInstance, audit: AuditStore): void {
  app.get('/admin/audit', async (request) => {
    const query = readAuditQuery(request.query as Record<string, unknown>);
    const rows = await audit.list({ ...query, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return { entries: page.map(renderEntry), next_cursor: rows.length > query.limit && last !== undefined ? last.id : null };
  });
}

function renderEntry(entry: AuditEntry): AnswerOf<typeof auditEntrySchema> {
  return {
    id: entry.id,
    time: isoTime(entry.time),
    actor: entry.actor,
    action: entry.action,
    resource: entry.resource,
    before: entry.before,
    after: entry.after,
  };
}

function readAuditQuery(query: Record<string, unknown>): AuditQuery {
  const cursor = text(query, 'cursor');
  if (cursor !== undefined && !cursorPattern.test(cursor)) throw invalidParameter('cursor', 'cursor must be a next_cursor of this API');
  return {
    from: time(query, 'from'),
    to: time(query, 'to'),
    actor: text(query, 'actor'),
    action: text(query, 'action'),
    resource: text(query, 'resource')
      ?.replace(/^\/?(admin\/)?/, '')
      .replace(/\/$/, ''),
    before: cursor,
    limit: limit(query['limit']),
  };
}

function text(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw invalidParameter(name, `${name} must be given once, as text`);
  return value;
}

function time(query: Record<string, unknown>, name: 'from' | 'to'): number | undefined {
  const value = text(query, name);
  if (value === undefined) return undefined;
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed)) throw invalidParameter(name, `${name} must be an ISO date-time such as 2026-11-01T00:00:00Z`);
  return parsed;
}

function limit(value: unknown): number {
  if (value === undefined || value === '') return defaultLimit;
  const parsed = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > maximumLimit) {
    throw invalidParameter('limit', `limit must be an integer from 1 to ${maximumLimit}`);
  }
  return parsed;
}
