import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { flowCapabilities, flowTools, registerFlows, type FlowTool, type SubscriptionBook } from './mcp-fixture-flows.ts';

/**
 * A real MCP server for the end-to-end tests: the SDK's McpServer over Streamable HTTP on loopback
 * (stateful sessions), with a few tools, a prompt and a resource. Every answer names the fixture's
 * `label`, so a test sees which upstream served a call through the gateway.
 */
export interface McpFixture {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly label: string;
  /** Headers of every HTTP request received, in order. */
  readonly requests: Array<{ method: string; headers: IncomingHttpHeaders }>;
  /** Sessions currently open. */
  sessionCount(): number;
  /** Resource subscriptions held, over every session (with `flows`). */
  subscriptionCount(): number;
  /**
   * Registers one more tool on every open session (the SDK then sends `notifications/tools/list_changed`)
   * and on the sessions opened later.
   */
  addTool(name: string): void;
  close(): Promise<void>;
}

export type FixtureTool = 'echo' | 'add' | 'create_issue' | 'list_issues' | 'whoami' | 'fail' | 'sleep';

export interface McpFixtureOptions {
  label: string;
  tools?: readonly FixtureTool[];
  instructions?: string;
  /** Listen on this port (to restart a fixture where it was); a free one when absent. */
  port?: number;
  /**
   * Server-to-client flows (mcp-fixture-flows.ts): tools `progress`, `log`, `sample`, `elicit`,
   * `roots`, `meta`, `touch` and `caps` (all, or those listed), logging, resource subscriptions,
   * and completions of a prompt `pick` and a template `fixture://<label>/items/{id}`.
   */
  flows?: boolean | readonly FlowTool[];
}

const defaultTools: readonly FixtureTool[] = ['echo', 'add', 'whoami', 'fail'];

export async function startMcpFixture(options: McpFixtureOptions): Promise<McpFixture> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const requests: McpFixture['requests'] = [];
  const added: string[] = [];
  const subscriptions: SubscriptionBook = new Map();
  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', headers: request.headers });
    void handle(request, sessions, options, servers, added, subscriptions).then(
      ({ transport, body }) => {
        if (transport === null) {
          response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"unknown session"}');
          return;
        }
        return transport.handleRequest(request, response, body);
      },
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  const port = await listen(server, options.port ?? 0);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    label: options.label,
    requests,
    sessionCount: () => sessions.size,
    subscriptionCount: () => [...subscriptions.values()].reduce((count, entry) => count + entry.uris.size, 0),
    addTool: (name) => {
      added.push(name);
      for (const mcp of servers) addLateTool(mcp, name, options.label);
    },
    close: async () => {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The same tools over the legacy HTTP+SSE transport: `GET /sse` opens a session, `POST /messages` feeds it. */
export async function startMcpSseFixture(options: McpFixtureOptions): Promise<McpFixture> {
  const sessions = new Map<string, SSEServerTransport>();
  const requests: McpFixture['requests'] = [];
  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', headers: request.headers });
    const url = new URL(request.url ?? '/', 'http://fixture');
    if (request.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', response);
      sessions.set(transport.sessionId, transport);
      response.once('close', () => sessions.delete(transport.sessionId));
      void buildServer(options).connect(transport);
      return;
    }
    const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
    if (request.method !== 'POST' || url.pathname !== '/messages' || transport === undefined) {
      response.writeHead(404).end('unknown session');
      return;
    }
    void transport.handlePostMessage(request, response);
  });
  const port = await listen(server, options.port ?? 0);
  return {
    url: `http://127.0.0.1:${port}/sse`,
    label: options.label,
    requests,
    sessionCount: () => sessions.size,
    subscriptionCount: () => 0,
    addTool: () => {
      throw new Error('not supported over SSE');
    },
    close: async () => {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function handle(
  request: IncomingMessage,
  sessions: Map<string, StreamableHTTPServerTransport>,
  options: McpFixtureOptions,
  servers: McpServer[],
  added: readonly string[],
  subscriptions: SubscriptionBook,
): Promise<{ transport: StreamableHTTPServerTransport | null; body: unknown }> {
  const body = request.method === 'POST' ? await readJson(request) : undefined;
  const sessionId = request.headers['mcp-session-id'];
  if (typeof sessionId === 'string') return { transport: sessions.get(sessionId) ?? null, body };
  if (!isInitializeRequest(body)) return { transport: null, body };
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => void sessions.set(id, transport),
  });
  transport.onclose = () => {
    if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
  };
  const mcp = buildServer(options);
  const { flows } = options;
  if (flows !== undefined && flows !== false) registerFlows(mcp, options.label, subscriptions, flows === true ? flowTools : flows);
  for (const name of added) addLateTool(mcp, name, options.label);
  servers.push(mcp);
  await mcp.connect(transport);
  return { transport, body };
}

function buildServer({ label, tools = defaultTools, instructions, flows }: McpFixtureOptions): McpServer {
  const server = new McpServer(
    { name: `fixture-${label}`, version: '1.0.0' },
    {
      ...(instructions === undefined ? {} : { instructions }),
      ...(flows === undefined || flows === false ? {} : { capabilities: flowCapabilities }),
    },
  );
  const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
  const definitions: Record<FixtureTool, () => void> = {
    echo: () =>
      server.registerTool('echo', { description: `Echo the text back (${label}).`, inputSchema: { text: z.string() } }, ({ text: value }) =>
        text(`${label}: ${value}`),
      ),
    add: () =>
      server.registerTool(
        'add',
        { title: 'Add numbers', description: 'Add two numbers and return the sum.', inputSchema: { a: z.number(), b: z.number() } },
        ({ a, b }) => text(`${label}: ${a + b}`),
      ),
    create_issue: () =>
      server.registerTool(
        'create_issue',
        { description: 'Create a new issue in the tracker.', inputSchema: { title: z.string(), body: z.string().optional() } },
        ({ title }) => text(`${label}: created issue "${title}"`),
      ),
    list_issues: () =>
      server.registerTool(
        'list_issues',
        { description: 'List the open issues of the tracker.', inputSchema: { state: z.string().optional() } },
        () => text(`${label}: no issues`),
      ),
    whoami: () =>
      server.registerTool('whoami', { description: 'Report the credentials the server received.' }, (extra) => {
        const headers = extra.requestInfo?.headers ?? {};
        return text(JSON.stringify({ label, authorization: headers['authorization'] ?? null, token: headers['x-fixture-token'] ?? null }));
      }),
    sleep: () =>
      server.registerTool(
        'sleep',
        { description: 'Wait some milliseconds, then answer.', inputSchema: { ms: z.number() } },
        async ({ ms }, extra) => {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, ms);
            extra.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
          });
          return text(`${label}: slept ${ms} ms`);
        },
      ),
    fail: () =>
      server.registerTool('fail', { description: 'Always fails with a tool error.' }, () => ({
        ...text(`${label}: failed on purpose`),
        isError: true,
      })),
  };
  for (const tool of tools) definitions[tool]();
  server.registerPrompt('greeting', { description: 'Greet someone.', argsSchema: { name: z.string() } }, ({ name }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Hello ${name}, from ${label}` } }],
  }));
  server.registerResource('readme', `fixture://${label}/readme`, { description: 'The fixture readme.', mimeType: 'text/plain' }, (uri) => ({
    contents: [{ uri: uri.href, text: `readme of ${label}` }],
  }));
  return server;
}

function addLateTool(mcp: McpServer, name: string, label: string): void {
  mcp.registerTool(name, { description: `Added later (${label}).` }, () => ({ content: [{ type: 'text', text: `${label}: ${name}` }] }));
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

function listen(server: HttpServer, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}
