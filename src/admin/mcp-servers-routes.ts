import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors/gateway-error.ts';
import type { McpGateway } from '../mcp/mcp-gateway.ts';
import type { McpServer } from '../mcp/mcp-registry.ts';
import { canonicalMcpName, checkMcpName, parseMcpServerFields } from '../mcp/mcp-validation.ts';
import { featureUnavailable, invalidParameter, isoTime, objectBody, registerFeatureRoutes } from './admin-errors.ts';
import { asBadRequest, requiredText } from './mcp-virtual-servers-routes.ts';

/** Header and environment values are secrets: views show `***`, and a PUT sending `***` keeps the stored value. */
const redacted = '***';

const redact = (values: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.keys(values).map((name) => [name, redacted]));

/** One server with its connection: status `connecting`, `connected` or `error`, the last error and counts. */
export function renderMcpServer(mcp: McpGateway, server: McpServer) {
  const connection = mcp.upstreams.get(server.slug);
  const catalog = connection?.catalog;
  return {
    slug: server.slug,
    description: server.description,
    transport: server.transport,
    url: server.url,
    headers: redact(server.headers),
    command: server.command,
    args: [...server.args],
    env: redact(server.env),
    managed: server.origin === 'manual',
    origin: server.origin,
    status: connection?.status ?? 'connecting',
    last_error: connection?.lastError ?? null,
    connected_at: isoTime(connection?.connectedAt ?? null),
    tool_count: catalog?.tools.length ?? 0,
    prompt_count: catalog?.prompts.length ?? 0,
    resource_count: (catalog?.resources.length ?? 0) + (catalog?.templates.length ?? 0),
    created_at: isoTime(server.createdAt),
    updated_at: isoTime(server.updatedAt),
  };
}

const viewOnlyFields = [
  'managed',
  'origin',
  'status',
  'last_error',
  'connected_at',
  'tool_count',
  'prompt_count',
  'resource_count',
  'created_at',
  'updated_at',
];

/** `GET|PUT /admin/mcp-servers`, `DELETE /admin/mcp-servers/{slug}`; 503 when MCP is off. */
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
      const { slug, fields } = readServerBody(objectBody(request.body));
      const definition = asBadRequest(() => parseMcpServerFields(fields, slug, '', false));
      const current = gateway();
      const existing = current.registry.server(slug);
      const headers = keepRedactedHeaders(definition.headers, existing?.origin === 'manual' ? existing.headers : {});
      return renderMcpServer(current, await current.registry.upsertServer({ ...definition, headers }));
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
  });
}

/** The canonical slug (`slug`, else `name`) and the settings of a PUT body; view-only fields are ignored. */
function readServerBody(body: Record<string, unknown>): { slug: string; fields: Record<string, unknown> } {
  const { slug: rawSlug, name: rawName, ...rest } = body;
  const field = rawSlug !== undefined && rawSlug !== null && rawSlug !== '' ? 'slug' : 'name';
  const raw = field === 'slug' ? rawSlug : rawName;
  if (raw === undefined || raw === null || raw === '') throw invalidRequest('slug is required', { code: 'missing_field', param: 'slug' });
  if (typeof raw !== 'string') throw invalidParameter(field, `${field} must be a string`);
  const slug = asBadRequest(() => checkMcpName(canonicalMcpName(raw), field, 'server slug'));
  const fields = Object.fromEntries(
    Object.entries(rest).filter(([name, value]) => {
      if (viewOnlyFields.includes(name)) return false;
      // The view lists every field: empty stdio fields of an http server are not settings.
      if (name === 'command' && value === null) return false;
      if ((name === 'args' && Array.isArray(value) && value.length === 0) || (name === 'env' && isEmptyObject(value))) return false;
      return true;
    }),
  );
  return { slug, fields };
}

function keepRedactedHeaders(headers: Readonly<Record<string, string>>, stored: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => {
      if (value !== redacted) return [name, value];
      const kept = stored[name];
      if (kept === undefined) {
        throw invalidParameter(`headers.${name}`, `header ${name} is redacted but has no stored value to preserve; provide the real value`);
      }
      return [name, kept];
    }),
  );
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}
