import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

// The server-to-client side of the MCP fixture (mcp-fixture-server.ts, option `flows`): tools that
// send progress and log messages during a call, ask the client for a sampling, an elicitation or
// its roots, echo `_meta`, and announce a resource update; resource subscriptions; completions.

export type FlowTool = 'progress' | 'log' | 'sample' | 'elicit' | 'roots' | 'meta' | 'touch' | 'caps';

export const flowTools: readonly FlowTool[] = ['progress', 'log', 'sample', 'elicit', 'roots', 'meta', 'touch', 'caps'];

/** What the server-to-client capabilities need before connect (McpServer options). */
export const flowCapabilities = { logging: {}, resources: { subscribe: true } } as const;

/** Subscriptions per session (URI sets and the way to notify the session), shared by the fixture's sessions. */
export type SubscriptionBook = Map<string, { readonly uris: Set<string>; readonly notify: (uri: string) => Promise<void> }>;

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

const failure = (error: unknown) => ({ ...text(`error: ${error instanceof Error ? error.message : String(error)}`), isError: true });

export function registerFlows(server: McpServer, label: string, subscriptions: SubscriptionBook, tools: readonly FlowTool[]): void {
  const { server: low } = server;
  const wanted = new Set(tools);
  const registerTool = ((name: FlowTool, ...rest: unknown[]) => {
    if (!wanted.has(name)) return undefined;
    return (server.registerTool as (...args: unknown[]) => unknown).call(server, name, ...rest);
  }) as McpServer['registerTool'];
  registerTool(
    'progress',
    { description: 'Report progress in steps.', inputSchema: { steps: z.number(), ms: z.number() } },
    async ({ steps, ms }, extra) => {
      const token = extra._meta?.progressToken;
      for (let step = 1; step <= steps; step += 1) {
        await new Promise((resolve) => setTimeout(resolve, ms));
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, total: steps, message: `${label} step ${step}` },
          });
        }
      }
      return text(`${label}: ${steps} steps`);
    },
  );
  registerTool('log', { description: 'Log during the call.' }, async (extra) => {
    await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', logger: label, data: `${label}: working` } });
    // Session-wide, filtered by the level the client set.
    await low.sendLoggingMessage({ level: 'debug', logger: label, data: `${label}: debug detail` }, extra.sessionId);
    await low.sendLoggingMessage({ level: 'warning', logger: label, data: `${label}: session warning` }, extra.sessionId);
    return text(`${label}: logged`);
  });
  registerTool('sample', { description: 'Ask the client for a sampling.' }, async (extra) => {
    const params = { messages: [{ role: 'user' as const, content: { type: 'text' as const, text: `from ${label}` } }], maxTokens: 10 };
    try {
      const result = await extra.sendRequest({ method: 'sampling/createMessage', params }, CreateMessageResultSchema);
      return text(`${label}: ${result.content.type === 'text' ? result.content.text : result.content.type} by ${result.model}`);
    } catch (error) {
      return failure(error);
    }
  });
  registerTool('elicit', { description: 'Ask the user.' }, async (extra) => {
    const requestedSchema = { type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] };
    try {
      const params = { mode: 'form' as const, message: `${label} wants a name`, requestedSchema };
      const result = await extra.sendRequest({ method: 'elicitation/create', params }, ElicitResultSchema);
      return text(`${label}: ${result.action} ${JSON.stringify(result.content ?? null)}`);
    } catch (error) {
      return failure(error);
    }
  });
  registerTool('roots', { description: 'List the client roots.' }, async (extra) => {
    try {
      const result = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema);
      return text(`${label}: ${result.roots.map((root) => root.uri).join(', ')}`);
    } catch (error) {
      return failure(error);
    }
  });
  registerTool('meta', { description: 'Echo the request _meta.' }, (extra) => ({
    ...text(JSON.stringify(extra._meta ?? null)),
    _meta: { 'fixture/echoed': extra._meta ?? null, 'fixture/label': label },
  }));
  registerTool('touch', { description: 'Announce an update of the readme to the sessions subscribed to it.' }, async () => {
    const uri = `fixture://${label}/readme`;
    const subscribed = [...subscriptions.values()].filter((entry) => entry.uris.has(uri));
    await Promise.all(subscribed.map((entry) => entry.notify(uri)));
    return text(`${label}: touched ${subscribed.length}`);
  });
  registerTool('caps', { description: 'The client capabilities of this session.' }, () =>
    text(JSON.stringify(low.getClientCapabilities() ?? null)),
  );
  server.registerPrompt(
    'pick',
    { description: 'Pick a person.', argsSchema: { person: completable(z.string(), (value) => completions(label, value)) } },
    ({ person }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `${person}, from ${label}` } }] }),
  );
  server.registerResource(
    'items',
    new ResourceTemplate(`fixture://${label}/items/{id}`, { list: undefined, complete: { id: (value) => completions(label, value) } }),
    { description: 'An item.' },
    (uri) => ({ contents: [{ uri: uri.href, text: `item of ${label}` }] }),
  );
  let sessionId = '';
  low.setRequestHandler(SubscribeRequestSchema, (request, extra) => {
    sessionId = extra.sessionId ?? '';
    const entry = subscriptions.get(sessionId) ?? { uris: new Set<string>(), notify: (uri: string) => low.sendResourceUpdated({ uri }) };
    entry.uris.add(request.params.uri);
    subscriptions.set(sessionId, entry);
    return {};
  });
  low.setRequestHandler(UnsubscribeRequestSchema, (request, extra) => {
    subscriptions.get(extra.sessionId ?? sessionId)?.uris.delete(request.params.uri);
    return {};
  });
  low.onclose = () => subscriptions.delete(sessionId);
}

function completions(label: string, value: string): string[] {
  return ['Alice', 'Bob', 'Alan'].filter((name) => name.startsWith(value)).map((name) => `${name}@${label}`);
}
