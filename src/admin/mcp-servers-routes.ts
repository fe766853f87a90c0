import type { FastifyInstance } from 'fastify';
import { invalidRequest, notFound } from '../errors/gateway-error.ts';
import type { McpServerDefinition } from '../mcp/mcp-definitions.ts';
import type { McpGateway } from '../mcp/mcp-gateway.ts';
import type { McpServer } from '../mcp/mcp-registry.ts';
import { slugForName } from '../mcp/mcp-server-fields.ts';
import { canonicalMcpName, checkMcpName, parseMcpServerFields } from '../mcp/mcp-validation.ts';
import { featureUnavailable, invalidParameter, objectBody, registerFeatureRoutes } from './admin-errors.ts';
import { renderMcpCatalog, renderMcpServer } from './mcp-server-views.ts';
import { keepRedactedSecret, keepRedactedUrl } from './redacted-secret.ts';
import { asBadRequest, requiredText } from './mcp-virtual-servers-routes.ts';

export { renderMcpServer } from './mcp-server-views.ts';

/**
 * `GET|PUT /admin/mcp-servers`, `DELETE /admin/mcp-servers/{slug}`,
 * `POST /admin/mcp-servers/{slug}/reconnect`, `GET /admin/mcp-servers/{slug}/catalog`; 503 when MCP is off.
 */
export function registerMcpServerRoutes(app: FastifyInstance, mcp: McpGateway | null): void {
  registerFeatureRoutes(app, { enabled: mcp !== null, name: 'the MCP gateway', setting: 'MCP_ENABLED' }, (scope) => {
    // Registered even when MCP is off, so that the scope's hook answers them with 503.
    const gateway = (): McpGateway => {
      if (mcp === null) throw featureUnavailable('the MCP gateway', 'MCP_ENABLED');
      return mcp;
    };
    scope.get('/admin/mcp-servers', async () => {
      const current = gateway();
      return current.registry.serverList().map((server) => renderMcpServer(current, server));
    });

    scope.put('/admin/mcp-servers', async (request) => {
      const body = objectBody(request.body);
      const { slug, fields } = readServerBody(body);
      const parsed = asBadRequest(() => parseMcpServerFields(fields, slug, '', { allowStdio: false, ignoreUnknown: true }));
      const current = gateway();
      const existing = current.registry.server(slug);
      const stored = existing?.origin === 'manual' ? existing : undefined;
      const definition = {
        ...keepOmittedSettings(parsed, body, stored),
        url: keepRedactedUrl(parsed.url, stored?.url ?? null),
        headers: keepRedactedHeaders(parsed.headers, parsed.url, stored),
      };
      return renderMcpServer(current, await current.registry.upsertServer(definition));
    });

    scope.delete<{ Params: { slug: string } }>('/admin/mcp-servers/:slug', async (request, reply) => {
      await gateway().registry.removeServer(canonicalMcpName(request.params.slug));
      return reply.code(204).send();
    });

    scope.delete('/admin/mcp-servers', async (request, reply) => {
      const body = objectBody(request.body);
      const slug = typeof body['slug'] === 'string' ? body['slug'] : requiredText(body, 'name');
      await gateway().registry.removeServer(canonicalMcpName(slug));
      return reply.code(204).send();
    });

    registerServerActions(scope, gateway);
  });
}

/** Reconnect (the fresh view, 200 even when the redial failed) and the catalog of one server. */
function registerServerActions(scope: FastifyInstance, gateway: () => McpGateway): void {
  const serverOf = (current: McpGateway, raw: string): McpServer => {
    const slug = canonicalMcpName(raw);
    const server = current.registry.server(slug);
    if (server === undefined) throw notFound(`no MCP server has the slug ${slug}`, { code: 'mcp_server_not_found' });
    return server;
  };
  scope.post<{ Params: { slug: string } }>('/admin/mcp-servers/:slug/reconnect', async (request) => {
    const current = gateway();
    const server = serverOf(current, request.params.slug);
    await current.upstreams.reconnect(server);
    return renderMcpServer(current, current.registry.server(server.slug) ?? server);
  });
  scope.get<{ Params: { slug: string } }>('/admin/mcp-servers/:slug/catalog', async (request) => {
    const current = gateway();
    return renderMcpCatalog(current, serverOf(current, request.params.slug));
  });
}

/**
 * The slug and the settings of a PUT body in GoModel's shape `{name, slug?, url, ...}`: `name` is
 * the display name, and gives the slug when `slug` is absent (itself when it is a valid slug,
 * else derived from it). Fields the gateway does not know are ignored.
 */
function readServerBody(body: Record<string, unknown>): { slug: string; fields: Record<string, unknown> } {
  const { slug: rawSlug, ...rest } = body;
  const rawName = body['name'];
  let slug: string;
  if (rawSlug !== undefined && rawSlug !== null && rawSlug !== '') {
    if (typeof rawSlug !== 'string') throw invalidParameter('slug', 'slug must be a string');
    slug = asBadRequest(() => checkMcpName(canonicalMcpName(rawSlug), 'slug', 'server slug'));
  } else {
    if (rawName === undefined || rawName === null || (typeof rawName === 'string' && rawName.trim() === '')) {
      throw invalidRequest('name is required', { code: 'missing_field', param: 'name' });
    }
    if (typeof rawName !== 'string') throw invalidParameter('name', 'name must be a string');
    slug = slugForName(rawName);
  }
  const fields = Object.fromEntries(
    Object.entries(rest).filter(([name, value]) => {
      // The view lists every field: empty stdio fields of an http server are not settings.
      if (name === 'command' && value === null) return false;
      if ((name === 'args' && Array.isArray(value) && value.length === 0) || (name === 'env' && isEmptyObject(value))) return false;
      return true;
    }),
  );
  return { slug, fields };
}

/**
 * On an update, the settings the body leaves out keep their stored value: `enabled` as GoModel, and
 * the others too, so that a client unaware of them (an older dashboard) cannot widen a server's
 * audience or drop its filters by accident. `null` or `[]` resets one.
 */
function keepOmittedSettings(
  parsed: McpServerDefinition,
  body: Record<string, unknown>,
  stored: McpServer | undefined,
): McpServerDefinition {
  if (stored === undefined) return parsed;
  const omitted = (...fields: string[]) => fields.every((field) => body[field] === undefined);
  return {
    ...parsed,
    name: omitted('name') ? stored.name : parsed.name,
    enabled: omitted('enabled') ? stored.enabled : parsed.enabled,
    allowedTools: omitted('allowed_tools') ? stored.allowedTools : parsed.allowedTools,
    disallowedTools: omitted('disallowed_tools') ? stored.disallowedTools : parsed.disallowedTools,
    userPaths: omitted('user_paths') ? stored.userPaths : parsed.userPaths,
    toolTimeoutSeconds: omitted('tool_timeout_seconds', 'tool_timeout') ? stored.toolTimeoutSeconds : parsed.toolTimeoutSeconds,
  };
}

/** `***` keeps a stored header only while the server's origin is unchanged (else 400 `secret_required`). */
function keepRedactedHeaders(
  headers: Readonly<Record<string, string>>,
  url: string | null,
  stored: McpServer | undefined,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      keepRedactedSecret(`headers.${name}`, value, url, { url: stored?.url ?? null, value: stored?.headers[name] }),
    ]),
  );
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}
