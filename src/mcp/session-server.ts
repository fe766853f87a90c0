import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { callToolName, discoveryTools, readCallTool, runSearchTools, searchToolName, toolError } from './discovery-tools.ts';
import { buildEndpointView, resourceOwner, type EndpointView } from './endpoint-view.ts';
import type { ToolDiscoveryMode } from './mcp-definitions.ts';
import { plainErrorMessage } from './plain-error-messages.ts';
import type { McpEndpoint } from './mcp-registry.ts';
import { filterTools } from './mcp-server-fields.ts';
import type { UpstreamConnection } from './upstream-connection.ts';
import type { UpstreamManager } from './upstream-manager.ts';
import { describeUpstreamError } from './upstream-transport.ts';

export interface SessionServerContext {
  /** The endpoint as it is now (membership edits reach open sessions), or null when it is no longer served. */
  endpoint(): McpEndpoint | null;
  upstreams: UpstreamManager;
  /** Whether the session's user path sees a server now (enabled, in scope): scope edits reach open sessions. */
  visible(slug: string): boolean;
  /** Fixed for the session at initialize. */
  toolDiscovery: ToolDiscoveryMode;
}

/**
 * The low-level SDK Server of one downstream session (ADR 0010). Every list is computed from the
 * members' current catalogs; every call is relayed to the owning upstream under its own name.
 * Tools, prompts and resources are always advertised, without `listChanged`.
 */
export function createSessionServer(context: SessionServerContext): Server {
  const view = (): Snapshot => snapshot(context);
  const server = new Server(
    { name: 'model-gateway', title: 'Model Gateway MCP', version: '0.1.0' },
    { capabilities: { tools: {}, prompts: {}, resources: {} }, instructions: instructionsOf(view(), context) },
  );
  const search = context.toolDiscovery === 'search';
  server.setRequestHandler(ListToolsRequestSchema, () => {
    const { view: current } = view();
    return { tools: search ? discoveryTools(current) : current.tools.map((exposed) => ({ ...exposed.tool, name: exposed.name })) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    if (search && name === searchToolName) return runSearchTools(view().view, args);
    if (search && name === callToolName) {
      const target = readCallTool(args);
      if (typeof target === 'string') return toolError(target);
      return callTool(context, view(), target.name, target.arguments, extra.signal).catch((error: unknown) =>
        toolError(plainMessage(error)),
      );
    }
    return callTool(context, view(), name, args ?? {}, extra.signal);
  });
  registerPromptAndResourceHandlers(server, context, view);
  return server;
}

interface Snapshot {
  readonly endpoint: McpEndpoint;
  readonly members: readonly string[];
  readonly view: EndpointView;
  /** Names (exposed and bare) of tools the members' filters hide, to say so when one is called. */
  readonly excluded: ReadonlySet<string>;
}

/**
 * The endpoint as the session's caller sees it now: members it can see (enabled, in scope) that
 * have a connection, each with the tools its filters expose.
 */
function snapshot(context: SessionServerContext): Snapshot {
  const endpoint = context.endpoint();
  if (endpoint === null) throw new McpError(ErrorCode.InvalidRequest, 'this MCP endpoint is no longer served');
  const namespaced = endpoint.kind !== 'server';
  const slugs = (endpoint.kind === 'server' ? [endpoint.name] : endpoint.members).filter((slug) => context.visible(slug));
  const excluded = new Set<string>();
  const members = slugs.flatMap((slug) => {
    const connection = context.upstreams.get(slug);
    if (connection === undefined) return [];
    const { exposed, excluded: hidden } = filterTools(connection.definition, connection.catalog.tools);
    for (const tool of hidden) excluded.add(namespaced ? `${slug}_${tool.name}` : tool.name).add(tool.name);
    return [{ slug, catalog: { ...connection.catalog, tools: exposed } }];
  });
  return { endpoint, members: members.map((member) => member.slug), view: buildEndpointView(members, namespaced), excluded };
}

/** Relays a call to the owning upstream under its own name, bounded by that server's `tool_timeout_seconds`. */
async function callTool(
  context: SessionServerContext,
  { view, excluded }: Snapshot,
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const exposed = view.toolsByName.get(name) ?? view.bareAliases.get(name);
  if (exposed === undefined) {
    const choices = view.ambiguous.get(name);
    if (choices !== undefined) {
      throw new McpError(ErrorCode.InvalidParams, `tool name "${name}" is ambiguous: call one of ${choices.join(', ')}`);
    }
    if (excluded.has(name)) throw new McpError(ErrorCode.InvalidParams, `tool is excluded by the gateway tool filters: "${name}"`);
    throw new McpError(
      ErrorCode.InvalidParams,
      `unknown tool "${name}"${context.toolDiscovery === 'search' ? '; use search_tools to find tool names' : ''}`,
    );
  }
  const result = await relay(context, exposed.slug, (client, connection) => {
    const timeout = connection.definition.toolTimeoutSeconds * 1000;
    return client.callTool({ name: exposed.tool.name, arguments: args }, undefined, { signal, timeout });
  });
  return result as CallToolResult;
}

function registerPromptAndResourceHandlers(server: Server, context: SessionServerContext, view: () => Snapshot): void {
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: view().view.prompts.map((exposed) => exposed.prompt) }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const exposed = view().view.promptsByName.get(request.params.name);
    if (exposed === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown prompt "${request.params.name}"`);
    const params = { ...request.params, name: exposed.originalName };
    return relay(context, exposed.slug, (client) => client.getPrompt(params, { signal: extra.signal }));
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: view().view.resources.map((entry) => entry.resource) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: view().view.templates.map((entry) => entry.template),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const current = view();
    const slug = resourceOwner(current.view, request.params.uri, current.members);
    if (slug === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown resource "${request.params.uri}"`);
    return relay(context, slug, (client) => client.readResource(request.params, { signal: extra.signal }));
  });
}

/** Runs an operation on a member's upstream; its failures (not its answers) become `mcp server "X": ...`. */
async function relay<Result>(
  context: SessionServerContext,
  slug: string,
  operation: (client: Client, connection: UpstreamConnection) => Promise<Result>,
): Promise<Result> {
  const connection = context.upstreams.get(slug);
  if (connection === undefined) throw new McpError(ErrorCode.InternalError, `mcp server "${slug}" is not available`);
  try {
    return await connection.use((client) => operation(client, connection));
  } catch (error) {
    if (error instanceof McpError) throw error;
    throw new McpError(ErrorCode.InternalError, `mcp server "${slug}": ${describeUpstreamError(error)}`);
  }
}

/** An error's message without the SDK's `MCP error <code>: ` prefixes (call_tool reports it as a tool error). */
function plainMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof McpError ? plainErrorMessage(message) : message;
}

/**
 * A pinned endpoint passes its upstream's instructions on; a virtual or aggregate one says what it
 * aggregates, then each member's instructions under `## <slug>` (`## <name> (\`<slug>\`)` with a display name).
 */
function instructionsOf({ endpoint, members }: Snapshot, context: SessionServerContext): string {
  const upstream = members.flatMap((slug) => {
    const connection = context.upstreams.get(slug);
    const text = connection?.catalog.instructions ?? '';
    const name = connection?.definition.name ?? '';
    return text === '' ? [] : [{ heading: name === '' || name === slug ? slug : `${name} (\`${slug}\`)`, text }];
  });
  if (endpoint.kind === 'server') return upstream[0]?.text ?? '';
  const head =
    endpoint.kind === 'virtual'
      ? `Model Gateway MCP virtual server "${endpoint.name}" aggregating ${members.length} server(s): ${members.join(', ')}.`
      : `Model Gateway MCP gateway aggregating ${members.length} server(s): ${members.join(', ')}.`;
  const parts = [`${head} Tools and prompts are namespaced as {server}_{name}.`];
  if (members.length === 0) parts.push('None of its member servers is available.');
  if (context.toolDiscovery === 'search')
    parts.push('Tools are not listed directly: find them with search_tools and run them with call_tool.');
  return [parts.join(' '), ...upstream.map(({ heading, text }) => `## ${heading}\n${text}`)].join('\n\n');
}
