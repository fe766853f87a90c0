import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors/gateway-error.ts';
import type { McpGateway } from '../mcp/mcp-gateway.ts';
import type { McpRegistry, McpVirtualServer } from '../mcp/mcp-registry.ts';
import { canonicalMcpName, checkMcpName, McpValidationError, parseMcpVirtualServerFields } from '../mcp/mcp-validation.ts';
import { featureUnavailable, invalidParameter, objectBody, registerFeatureRoutes } from './admin-errors.ts';
import type { AnswerOf, mcpVirtualServerSchema } from './schemas/answers.ts';

/**
 * One virtual MCP server as `GET /admin/mcp-virtual-servers` lists it (SEED-SPEC
 * `mcpVirtualServerResponse`): every field always present, `''` and `[]` when empty; `managed`
 * is true for admin-managed servers and false for configuration ones (CONTRACT section 9).
 */
export function renderVirtualServer(registry: McpRegistry, virtual: McpVirtualServer): AnswerOf<typeof mcpVirtualServerSchema> {
  return {
    name: virtual.name,
    description: virtual.description,
    servers: [...virtual.servers],
    missing_servers: registry.missingServers(virtual),
    conflict: registry.conflictOf(virtual),
    managed: virtual.origin === 'manual',
    configured_tool_discovery: virtual.toolDiscovery,
    tool_discovery: registry.effectiveToolDiscovery(virtual),
  };
}

/** Fields of the listing that a client may send back unchanged: they are not settings. */
const viewOnlyFields = ['missing_servers', 'conflict', 'managed'];

/** `GET|PUT /admin/mcp-virtual-servers`, `DELETE /admin/mcp-virtual-servers/{name}`; 503 when MCP is off. */
export function registerMcpVirtualServerRoutes(app: FastifyInstance, mcp: McpGateway | null): void {
  registerFeatureRoutes(app, { enabled: mcp !== null, name: 'the MCP gateway', setting: 'MCP_ENABLED' }, (scope) => {
    // Registered even when MCP is off, so that the scope's hook answers them with 503.
    const gateway = (): McpGateway => {
      if (mcp === null) throw featureUnavailable('the MCP gateway', 'MCP_ENABLED');
      return mcp;
    };
    scope.get('/admin/mcp-virtual-servers', async () => {
      const { registry } = gateway();
      return registry.virtualServerList().map((virtual) => renderVirtualServer(registry, virtual));
    });

    scope.put('/admin/mcp-virtual-servers', async (request) => {
      const { name, fields } = readVirtualServerBody(objectBody(request.body));
      const definition = asBadRequest(() => parseMcpVirtualServerFields(fields, name, ''));
      const { registry } = gateway();
      return renderVirtualServer(registry, await registry.upsertVirtualServer(definition));
    });

    scope.delete<{ Params: { name: string } }>('/admin/mcp-virtual-servers/:name', async (request, reply) => {
      await gateway().registry.removeVirtualServer(canonicalMcpName(request.params.name));
      return reply.code(204).send();
    });

    // The body form of /admin/virtual-models, for clients that send `{"name": ...}`.
    scope.delete('/admin/mcp-virtual-servers', async (request, reply) => {
      await gateway().registry.removeVirtualServer(canonicalMcpName(requiredText(objectBody(request.body), 'name')));
      return reply.code(204).send();
    });
  });
}

/**
 * The canonical name and the settings of a PUT body. What the listing returned may be sent back:
 * view-only fields are ignored, and `configured_tool_discovery` (the stored setting) wins over
 * `tool_discovery` (which the listing fills with the effective mode).
 */
function readVirtualServerBody(body: Record<string, unknown>): { name: string; fields: Record<string, unknown> } {
  const { name: rawName, configured_tool_discovery: configured, tool_discovery: discovery, ...rest } = body;
  if (rawName === undefined || rawName === null || rawName === '') {
    throw invalidRequest('name is required', { code: 'missing_field', param: 'name' });
  }
  if (typeof rawName !== 'string') throw invalidParameter('name', 'name must be a string');
  const name = asBadRequest(() => checkMcpName(canonicalMcpName(rawName), 'name', 'virtual server name'));
  const fields: Record<string, unknown> = Object.fromEntries(Object.entries(rest).filter(([field]) => !viewOnlyFields.includes(field)));
  const toolDiscovery = configured !== undefined ? configured : discovery;
  if (toolDiscovery !== undefined) fields['tool_discovery'] = toolDiscovery;
  return { name, fields };
}

export function requiredText(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value.trim() === '')
    throw invalidRequest(`${field} is required`, { code: 'missing_field', param: field });
  return value;
}

export function asBadRequest<Result>(action: () => Result): Result {
  try {
    return action();
  } catch (error) {
    if (error instanceof McpValidationError) throw invalidParameter(error.field, error.message);
    throw error;
  }
}
