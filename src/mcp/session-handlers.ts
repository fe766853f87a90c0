import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra, RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { resourceOwner, type EndpointView } from './endpoint-view.ts';
import type { McpEndpoint } from './mcp-registry.ts';
import type { SessionUpstreams } from './session-upstreams.ts';

export interface Snapshot {
  readonly endpoint: McpEndpoint;
  readonly members: readonly string[];
  readonly view: EndpointView;
  /** Names (exposed and bare) of tools the members' filters hide, to say so when one is called. */
  readonly excluded: ReadonlySet<string>;
}

export type RelayExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Progress of a relayed request: when the client asked for it (`_meta.progressToken`), the upstream
 * is asked too (under the SDK's own token), each notification goes back under the client's token,
 * and each one starts the request's timeout again.
 */
export function progressRelay(meta: Record<string, unknown> | undefined, extra: RelayExtra): RequestOptions {
  const token = meta?.['progressToken'];
  if (typeof token !== 'string' && typeof token !== 'number') return {};
  return {
    resetTimeoutOnProgress: true,
    onprogress: (progress) => {
      void extra
        .sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } })
        .catch(() => undefined);
    },
  };
}

/**
 * Prompts, resources, subscriptions, completions, logging and roots of a session (ADR 0033). Each
 * request goes to the member that owns its name or URI, through the session's upstream session.
 */
export function registerSessionHandlers(
  server: Server,
  upstreams: SessionUpstreams,
  view: () => Snapshot,
  capabilities: ServerCapabilities,
): void {
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: view().view.prompts.map((exposed) => exposed.prompt) }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const { view: current } = view();
    const exposed = current.promptsByName.get(request.params.name) ?? current.promptAliases.get(request.params.name);
    if (exposed === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown prompt "${request.params.name}"`);
    const params = { ...request.params, name: exposed.originalName };
    const options = { signal: extra.signal, ...progressRelay(request.params._meta, extra) };
    return upstreams.use(exposed.slug, extra.requestId, (client) => client.getPrompt(params, options));
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: view().view.resources.map((entry) => entry.resource) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: view().view.templates.map((entry) => entry.template),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const slug = ownerOf(view(), request.params.uri);
    const options = { signal: extra.signal, ...progressRelay(request.params._meta, extra) };
    return upstreams.use(slug, extra.requestId, (client) => client.readResource(request.params, options));
  });
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    await upstreams.subscribe(ownerOf(view(), request.params.uri), request.params.uri, request.params._meta);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    await upstreams.unsubscribe(ownerOf(view(), request.params.uri), request.params.uri, request.params._meta);
    return {};
  });
  if (capabilities.completions !== undefined) registerCompletions(server, upstreams, view);
  if (capabilities.logging !== undefined) {
    server.setRequestHandler(SetLevelRequestSchema, async (request) => {
      await upstreams.setLevel(request.params.level, view().members);
      return {};
    });
  }
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => upstreams.rootsChanged());
}

/** `completion/complete`: a prompt reference is renamed to the owner's own name, a template reference goes to its owner. */
function registerCompletions(server: Server, upstreams: SessionUpstreams, view: () => Snapshot): void {
  server.setRequestHandler(CompleteRequestSchema, async (request, extra) => {
    const current = view();
    const { ref } = request.params;
    let slug: string;
    let params = request.params;
    if (ref.type === 'ref/prompt') {
      const exposed = current.view.promptsByName.get(ref.name) ?? current.view.promptAliases.get(ref.name);
      if (exposed === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown prompt "${ref.name}"`);
      slug = exposed.slug;
      params = { ...request.params, ref: { ...ref, name: exposed.originalName } };
    } else {
      slug = current.view.templates.find((entry) => entry.template.uriTemplate === ref.uri)?.slug ?? ownerOf(current, ref.uri);
    }
    return upstreams.use(slug, extra.requestId, (client) => client.complete(params, { signal: extra.signal }));
  });
}

function ownerOf({ view, members }: Snapshot, uri: string): string {
  const slug = resourceOwner(view, uri, members);
  if (slug === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown resource "${uri}"`);
  return slug;
}
