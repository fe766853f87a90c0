import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type RequestId,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { callToolName, discoveryTools, readCallTool, runSearchTools, searchToolName, toolError } from './discovery-tools.ts';
import { buildEndpointView, type EndpointNaming } from './endpoint-view.ts';
import type { ToolDiscoveryMode } from './mcp-definitions.ts';
import { plainErrorMessage } from './plain-error-messages.ts';
import type { McpEndpoint } from './mcp-registry.ts';
import { filterTools } from './mcp-server-fields.ts';
import { progressRelay, registerSessionHandlers, type RelayExtra, type Snapshot } from './session-handlers.ts';
import { SessionUpstreams } from './session-upstreams.ts';
import type { UpstreamManager } from './upstream-manager.ts';

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
 * members' current catalogs; every call is relayed to the owning upstream under its own name, through
 * this session's own upstream session with that server (ADR 0033), so that what the server sends back
 * during the call reaches this session's client.
 */
export function createSessionServer(context: SessionServerContext): Server {
  const view = (): Snapshot => snapshot(context);
  const initial = view();
  const capabilities = capabilitiesOf(initial, context);
  const server = new Server(
    { name: 'model-gateway', title: 'Model Gateway MCP', version: '0.1.0' },
    { capabilities, instructions: instructionsOf(initial, context) },
  );
  const upstreams = new SessionUpstreams(server, context.upstreams);
  const search = context.toolDiscovery === 'search';
  server.setRequestHandler(ListToolsRequestSchema, () => {
    const { view: current } = view();
    return { tools: search ? discoveryTools(current) : current.tools.map((exposed) => ({ ...exposed.tool, name: exposed.name })) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args, _meta: meta } = request.params;
    const call = { upstreams, requestId: extra.requestId, extra, meta };
    if (search && name === searchToolName) return runSearchTools(view().view, args);
    if (search && name === callToolName) {
      const target = readCallTool(args);
      if (typeof target === 'string') return toolError(target);
      return callTool(context, view(), target.name, target.arguments, call).catch((error: unknown) => toolError(plainMessage(error)));
    }
    return callTool(context, view(), name, args ?? {}, call);
  });
  registerSessionHandlers(server, upstreams, view, capabilities);
  const stopListening = context.upstreams.onCatalogChanged((slug, lists) => {
    const endpoint = context.endpoint();
    if (endpoint === null || !context.visible(slug)) return;
    if (endpoint.kind === 'server' ? endpoint.name !== slug : !endpoint.members.includes(slug)) return;
    if (lists.includes('tools')) void server.sendToolListChanged().catch(() => undefined);
    if (lists.includes('prompts')) void server.sendPromptListChanged().catch(() => undefined);
    if (lists.includes('resources')) void server.sendResourceListChanged().catch(() => undefined);
  });
  server.onclose = () => {
    stopListening();
    void upstreams.close();
  };
  return server;
}

/**
 * The endpoint as the session's caller sees it now: members it can see (enabled, in scope) that
 * have a connection, each with the tools its filters expose.
 */
function snapshot(context: SessionServerContext): Snapshot {
  const endpoint = context.endpoint();
  if (endpoint === null) throw new McpError(ErrorCode.InvalidRequest, 'this MCP endpoint is no longer served');
  const naming: EndpointNaming = endpoint.kind === 'server' ? 'own' : endpoint.kind === 'virtual' ? 'bare' : 'prefixed';
  const slugs = (endpoint.kind === 'server' ? [endpoint.name] : endpoint.members).filter((slug) => context.visible(slug));
  const excluded = new Set<string>();
  const members = slugs.flatMap((slug) => {
    const connection = context.upstreams.get(slug);
    if (connection === undefined) return [];
    const { exposed, excluded: hidden } = filterTools(connection.definition, connection.catalog.tools);
    for (const tool of hidden) excluded.add(naming === 'own' ? tool.name : `${slug}_${tool.name}`).add(tool.name);
    return [{ slug, catalog: { ...connection.catalog, tools: exposed } }];
  });
  return { endpoint, members: members.map((member) => member.slug), view: buildEndpointView(members, naming), excluded };
}

interface ToolCall {
  readonly upstreams: SessionUpstreams;
  readonly requestId: RequestId;
  readonly extra: RelayExtra;
  readonly meta: Record<string, unknown> | undefined;
}

/**
 * Relays a call to the owning upstream under its own name, with the request's `_meta`, bounded by
 * that server's `tool_timeout_seconds` (which each progress notification starts again).
 */
async function callTool(
  context: SessionServerContext,
  { view, excluded }: Snapshot,
  name: string,
  args: Record<string, unknown>,
  call: ToolCall,
): Promise<CallToolResult> {
  const exposed = view.toolsByName.get(name) ?? view.aliases.get(name);
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
  const params = { name: exposed.tool.name, arguments: args, ...(call.meta === undefined ? {} : { _meta: call.meta }) };
  const result = await call.upstreams.use(exposed.slug, call.requestId, (client, connection) => {
    const options: RequestOptions = {
      signal: call.extra.signal,
      timeout: connection.definition.toolTimeoutSeconds * 1000,
      ...progressRelay(call.meta, call.extra),
    };
    return client.callTool(params, undefined, options);
  });
  return result as CallToolResult;
}

/**
 * What the session advertises: tools, prompts and resources with `listChanged` (changes of any member
 * are announced), and `resources.subscribe`, `logging` and `completions` when a member it can see
 * advertised them (members not connected yet count once they are, in later sessions).
 */
function capabilitiesOf({ members }: Snapshot, context: SessionServerContext): ServerCapabilities {
  const upstream = members.map((slug) => context.upstreams.get(slug)?.capabilities ?? {});
  const subscribe = upstream.some((capabilities) => capabilities.resources?.subscribe === true);
  return {
    tools: { listChanged: true },
    prompts: { listChanged: true },
    resources: { listChanged: true, ...(subscribe ? { subscribe: true } : {}) },
    ...(upstream.some((capabilities) => capabilities.logging !== undefined) ? { logging: {} } : {}),
    ...(upstream.some((capabilities) => capabilities.completions !== undefined) ? { completions: {} } : {}),
  };
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
      ? `Model Gateway MCP virtual server "${endpoint.name}" aggregating ${members.length} server(s): ${members.join(', ')}. ` +
        'Tools and prompts keep their own names; a name several servers share is namespaced as {server}_{name}.'
      : `Model Gateway MCP gateway aggregating ${members.length} server(s): ${members.join(', ')}. ` +
        'Tools and prompts are namespaced as {server}_{name}.';
  const parts = [head];
  if (members.length === 0) parts.push('None of its member servers is available.');
  if (context.toolDiscovery === 'search')
    parts.push('Tools are not listed directly: find them with search_tools and run them with call_tool.');
  return [parts.join(' '), ...upstream.map(({ heading, text }) => `## ${heading}\n${text}`)].join('\n\n');
}
