import type { Prompt, Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpGateway } from '../mcp/mcp-gateway.ts';
import type { McpServer } from '../mcp/mcp-registry.ts';
import { filterTools } from '../mcp/mcp-server-fields.ts';
import { isoTime } from './admin-errors.ts';
import { redacted, redactUrlSecrets } from './redacted-secret.ts';
import type { AnswerOf, mcpCatalogSchema, mcpServerSchema } from './schemas/answers.ts';

/**
 * Header and environment values are secrets, and so are a URL's password and credential-like
 * query values: views show `***`; a PUT sending `***` keeps the stored value (redacted-secret.ts).
 */

const redact = (values: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.keys(values).map((name) => [name, redacted]));

/**
 * One server as the admin API shows it: its declaration (secrets redacted, every field present),
 * then its connection. `status` is `disabled`, `connecting`, `connected` or `error`; `tool_count`
 * counts the tools its filters expose and `excluded_tool_count` those they hide.
 */
export function renderMcpServer(mcp: McpGateway, server: McpServer): AnswerOf<typeof mcpServerSchema> {
  const connection = server.enabled ? mcp.upstreams.get(server.slug) : undefined;
  const catalog = connection?.catalog;
  const tools = filterTools(server, catalog?.tools ?? []);
  return {
    name: server.name === '' ? server.slug : server.name,
    slug: server.slug,
    description: server.description,
    transport: server.transport,
    url: server.url === null ? null : redactUrlSecrets(server.url),
    headers: redact(server.headers),
    command: server.command,
    args: [...server.args],
    env: redact(server.env),
    enabled: server.enabled,
    allowed_tools: [...server.allowedTools],
    disallowed_tools: [...server.disallowedTools],
    user_paths: [...server.userPaths],
    tool_timeout_seconds: server.toolTimeoutSeconds,
    managed: server.origin === 'manual',
    origin: server.origin,
    status: server.enabled ? (connection?.status ?? 'connecting') : 'disabled',
    last_error: connection?.lastError ?? null,
    connected_at: isoTime(connection?.connectedAt ?? null),
    tool_count: tools.exposed.length,
    excluded_tool_count: tools.excluded.length,
    prompt_count: catalog?.prompts.length ?? 0,
    resource_count: (catalog?.resources.length ?? 0) + (catalog?.templates.length ?? 0),
    created_at: isoTime(server.createdAt),
    updated_at: isoTime(server.updatedAt),
  };
}

/**
 * What one server offers as last listed, under the upstream's own names (GoModel's catalog view):
 * the tools its filters expose, those they hide, prompts, resources and templates. Optional
 * fields are left out when the upstream gave none.
 */
export function renderMcpCatalog(mcp: McpGateway, server: McpServer): AnswerOf<typeof mcpCatalogSchema> {
  const connection = server.enabled ? mcp.upstreams.get(server.slug) : undefined;
  const catalog = connection?.catalog;
  const tools = filterTools(server, catalog?.tools ?? []);
  const instructions = catalog?.instructions ?? '';
  return {
    server: server.slug,
    status: server.enabled ? (connection?.status ?? 'connecting') : 'disabled',
    ...(instructions === '' ? {} : { instructions }),
    tools: tools.exposed.map(toolFeature),
    excluded_tools: tools.excluded.map(toolFeature),
    prompts: (catalog?.prompts ?? []).map((prompt: Prompt) => ({ name: prompt.name, ...described(prompt.description) })),
    resources: (catalog?.resources ?? []).map((resource: Resource) => ({
      uri: resource.uri,
      ...(resource.name === '' ? {} : { name: resource.name }),
      ...described(resource.description),
    })),
    templates: (catalog?.templates ?? []).map((template: ResourceTemplate) => ({
      uri_template: template.uriTemplate,
      ...(template.name === '' ? {} : { name: template.name }),
      ...described(template.description),
    })),
  };
}

/** A tool's name, description, and its safety hints only when the upstream set them. */
function toolFeature(tool: Tool) {
  const hints = tool.annotations ?? {};
  return {
    name: tool.name,
    ...described(tool.description),
    ...(typeof hints.readOnlyHint === 'boolean' ? { read_only: hints.readOnlyHint } : {}),
    ...(typeof hints.destructiveHint === 'boolean' ? { destructive: hints.destructiveHint } : {}),
  };
}

function described(description: string | undefined): { description?: string } {
  return description === undefined || description === '' ? {} : { description };
}
