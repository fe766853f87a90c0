import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { streamRetryMs } from './event-store.ts';
import type { ToolDiscoveryMode } from './mcp-definitions.ts';
import type { McpGateway } from './mcp-gateway.ts';
import { endpointKey } from './mcp-registry.ts';
import { withCursorCheck } from './list-cursor.ts';
import type { SessionBinding } from './mcp-sessions.ts';
import { withPlainErrorMessages } from './plain-error-messages.ts';
import { createSessionServer } from './session-server.ts';

// What /mcp needs of the MCP server SDK, in a module of its own so that the route loads it on
// the first request (src/http/routes/mcp.ts) and a gateway nobody calls /mcp on never does.

/** A new transport and session server; the session is registered once the SDK has given it an id. */
export async function openSession(
  mcp: McpGateway,
  binding: SessionBinding,
  name: string,
  override: ToolDiscoveryMode | null,
): Promise<StreamableHTTPServerTransport> {
  const initial = mcp.registry.resolveEndpoint(name);
  const toolDiscovery = override ?? initial?.toolDiscovery ?? mcp.registry.defaultToolDiscovery;
  const server = createSessionServer({
    endpoint: () => {
      const current = mcp.registry.resolveEndpoint(name);
      return current !== null && endpointKey(current) === binding.endpoint ? current : null;
    },
    upstreams: mcp.upstreams,
    visible: (slug) => mcp.registry.visibleTo(slug, binding.userPath),
    toolDiscovery,
  });
  const id = `${mcp.sessionIdPrefix}${randomUUID()}`;
  const transport: StreamableHTTPServerTransport = withPlainErrorMessages(
    new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      // Resumable streams (ADR 0034): event ids, a `retry` hint, replay after Last-Event-ID.
      eventStore: mcp.events.forSession(id),
      retryInterval: streamRetryMs,
      onsessioninitialized: () => {
        mcp.sessions.add({ id, binding, transport, server, lastSeen: Date.now() });
        void mcp.events.recordSession(id, binding);
      },
      // DELETE: the client is done, no replica replays the session any more.
      onsessionclosed: () => mcp.events.forget(id),
    }),
  );
  transport.onclose = () => {
    mcp.sessions.forget(id);
    // A shared store keeps a closed session's events until their TTL: a client may resume through another replica.
    if (mcp.events.kind === 'memory') mcp.events.forget(id);
  };
  await server.connect(transport);
  withCursorCheck(transport);
  return transport;
}

/** Whether a POST body holds an initialize request (one message or a batch). */
export function startsSession(body: unknown): boolean {
  return Array.isArray(body) ? body.some((message) => isInitializeRequest(message)) : isInitializeRequest(body);
}
