import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { projectRoot } from '../../core/project-root.ts';
import { notFound } from '../../errors/gateway-error.ts';

/** The dashboard's files: `dashboard/` at the project root (found from src/, dist/ or the bundle). */
export const defaultDashboardDirectory = `${join(projectRoot(), 'dashboard')}${sep}`;

/** Only these kinds of files are served; anything else in the folder stays private. */
const contentTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
};

/**
 * Self only: scripts and styles come from the gateway's own files (no inline code, no CDN),
 * data from its own admin API. The page cannot be framed.
 */
export const dashboardContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
}

/** Reads every servable file once (a few dozen kilobytes), keyed by URL path. */
export function loadDashboardAssets(directory: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(directory)) return assets;
  for (const entry of readdirSync(directory, { recursive: true, withFileTypes: true })) {
    const contentType = contentTypes[extname(entry.name).toLowerCase()];
    if (!entry.isFile() || contentType === undefined || entry.name.startsWith('.')) continue;
    const file = join(entry.parentPath, entry.name);
    const body = readFileSync(file);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    assets.set(relative(directory, file).split(sep).join('/'), { body, contentType, etag });
  }
  return assets;
}

/** `GET /dashboard/session.json`: what the sign-in page needs before it has a key. */
export const dashboardSessionFile = 'session.json';

/**
 * `GET /dashboard` (the single page) and `GET /dashboard/<file>` (its scripts and styles).
 * No authentication: the page holds no data; it calls /admin with the master key the user
 * types. Files revalidate on every load (ETag), since their names carry no version.
 * `GET /dashboard/session.json` says whether the admin API is open (open mode), so that the
 * sign-in page need not call /admin without a key (a 401 in the console on every load); anyone
 * could learn that from one unauthenticated /admin call anyway.
 */
export function registerDashboardRoutes(
  app: FastifyInstance,
  directory = defaultDashboardDirectory,
  adminOpen: boolean | (() => boolean) = false,
): void {
  // Read on the first dashboard request, not at start-up (a gateway nobody opens it on never does).
  let assets: Map<string, Asset> | null = null;
  const serve = (name: string, request: FastifyRequest, reply: FastifyReply) => {
    if (name === dashboardSessionFile) {
      return reply
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff')
        .send({ admin_open: typeof adminOpen === 'function' ? adminOpen() : adminOpen });
    }
    assets ??= loadDashboardAssets(directory);
    const asset = assets.get(name);
    if (asset === undefined) throw notFound(`no dashboard file ${name}`, { code: 'unknown_route' });
    void reply
      .header('content-security-policy', dashboardContentSecurityPolicy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cache-control', 'no-cache')
      .header('etag', asset.etag);
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.header('content-type', asset.contentType).send(asset.body);
  };
  app.get('/dashboard', async (request, reply) => serve('index.html', request, reply));
  app.get<{ Params: { '*': string } }>('/dashboard/*', async (request, reply) =>
    serve(request.params['*'] === '' ? 'index.html' : request.params['*'], request, reply),
  );
}
