import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport, type EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  isInitializeRequest,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  CreateMessageResultSchema,
  type CallToolResult,
  type GetPromptResult,
  type JSONRPCMessage,
  type ReadResourceResult,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { conformanceTools, defaultsSchema, enumsSchema, pngPixel, wavSample } from './mcp-conformance-catalog.ts';

// An upstream MCP server that implements what the official conformance suite's server scenarios
// call (@modelcontextprotocol/conformance): the tools, resources, prompts, logging, completion,
// subscriptions, resumable streams and loopback Host checks they exercise. Written from the
// scenarios' expectations for scripts/mcp-conformance.ts; it is the upstream the gateway targets
// of the conformance run sit on.

export interface ConformanceServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

const loopbackNames = new Set(['localhost', '127.0.0.1', '[::1]']);

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
}

/** Starts the server on a free loopback port. */
export async function startConformanceServer(): Promise<ConformanceServer> {
  const sessions = new Map<string, Session>();
  const events = memoryEvents();
  const http = createServer((request, response) => {
    void serve(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InternalError, message: String(error) } }));
    });
  });

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!loopbackRequest(request)) {
      response.writeHead(403, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Host or Origin not allowed' } }));
      return;
    }
    const body = request.method === 'POST' ? await readJson(request) : undefined;
    const id = request.headers['mcp-session-id'];
    const sessionId = Array.isArray(id) ? id[0] : id;
    let session = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (sessionId !== undefined && session === undefined) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
      return;
    }
    if (session === undefined) {
      if (request.method !== 'POST' || !isInitializeRequest(body)) {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Mcp-Session-Id required' } }));
        return;
      }
      session = openSession(sessions, events);
      await session.server.connect(session.transport);
    }
    await session.transport.handleRequest(request, response, body);
  }

  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      await Promise.all([...sessions.values()].map((session) => session.transport.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function openSession(sessions: Map<string, Session>, events: EventStore): Session {
  const server = createConformanceServer((requestId) => transport.closeSSEStream(requestId));
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    eventStore: events,
    retryInterval: 500,
    onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
  });
  transport.onclose = () => {
    if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
  };
  return { transport, server };
}

function loopbackRequest(request: IncomingMessage): boolean {
  const host = request.headers.host ?? '';
  if (!loopbackNames.has(host.replace(/:\d+$/, ''))) return false;
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return loopbackNames.has(new URL(origin).hostname);
  } catch {
    return false;
  }
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Events of every stream of the process, by id `<stream>::<sequence>`. */
function memoryEvents(): EventStore {
  const stored: Array<{ id: string; streamId: string; message: JSONRPCMessage }> = [];
  let sequence = 0;
  return {
    storeEvent: (streamId, message) => {
      sequence += 1;
      const id = `${streamId}::${String(sequence).padStart(10, '0')}`;
      stored.push({ id, streamId, message });
      return Promise.resolve(id);
    },
    replayEventsAfter: async (lastEventId, { send }) => {
      const streamId = lastEventId.split('::')[0] ?? '';
      for (const event of stored) {
        if (event.streamId === streamId && event.id > lastEventId) await send(event.id, event.message);
      }
      return streamId;
    },
  };
}

function createConformanceServer(closeStream: (requestId: RequestId) => void): Server {
  const server = new Server(
    { name: 'mcp-conformance-upstream', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
    },
  );
  const log = (data: string): void => {
    server.sendLoggingMessage({ level: 'info', logger: 'conformance-upstream', data }).catch(() => undefined);
  };
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: conformanceTools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case 'test_simple_text':
        return text('This is a simple text response for testing.');
      case 'test_image_content':
        return { content: [{ type: 'image', data: pngPixel, mimeType: 'image/png' }] };
      case 'test_audio_content':
        return { content: [{ type: 'audio', data: wavSample, mimeType: 'audio/wav' }] };
      case 'test_embedded_resource':
        return {
          content: [
            {
              type: 'resource',
              resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
            },
          ],
        };
      case 'test_multiple_content_types':
        return {
          content: [
            { type: 'text', text: 'Multiple content types test:' },
            { type: 'image', data: pngPixel, mimeType: 'image/png' },
            {
              type: 'resource',
              resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' },
            },
          ],
        };
      case 'test_tool_with_logging':
        for (const [index, data] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
          if (index > 0) await sleep(50);
          await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
        }
        return text('Tool with logging executed successfully');
      case 'test_tool_with_progress': {
        const progressToken = extra._meta?.progressToken ?? 0;
        for (const progress of [0, 50, 100]) {
          if (progress > 0) await sleep(50);
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
          });
        }
        return text(String(progressToken));
      }
      case 'test_error_handling':
        return { isError: true, content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }] };
      case 'test_reconnection':
        closeStream(extra.requestId);
        await sleep(100);
        return text('Reconnection test completed successfully.');
      case 'test_sampling': {
        const prompt = typeof args['prompt'] === 'string' ? args['prompt'] : '';
        const result = await server
          .request(
            {
              method: 'sampling/createMessage',
              params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
            },
            CreateMessageResultSchema,
          )
          .catch((error: unknown) => error as Error);
        if (result instanceof Error) return text(`Sampling not supported or error: ${result.message}`);
        return text(`LLM response: ${result.content.type === 'text' ? result.content.text : 'No response'}`);
      }
      case 'test_elicitation':
        return elicit(server, typeof args['message'] === 'string' ? args['message'] : '', {
          type: 'object',
          properties: { response: { type: 'string', description: "User's response" } },
          required: ['response'],
        });
      case 'test_elicitation_sep1034_defaults':
        return elicit(server, 'Please review and update the form fields with defaults', defaultsSchema);
      case 'test_elicitation_sep1330_enums':
        return elicit(server, 'Please select options from the enum fields', enumsSchema);
      case 'json_schema_2020_12_tool':
        return text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`);
      default:
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    }
  });
  registerResources(server, log);
  registerPrompts(server);
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    log(`Log level set to: ${request.params.level}`);
    return {};
  });
  server.setRequestHandler(CompleteRequestSchema, () => ({ completion: { values: [], total: 0, hasMore: false } }));
  return server;
}

async function elicit(server: Server, message: string, requestedSchema: Record<string, unknown>): Promise<CallToolResult> {
  try {
    const result = await server.request(
      { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } },
      ElicitResultSchema,
    );
    return {
      content: [{ type: 'text', text: `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}` }],
    };
  } catch (error) {
    return {
      content: [{ type: 'text', text: `Elicitation not supported or error: ${error instanceof Error ? error.message : String(error)}` }],
    };
  }
}

function registerResources(server: Server, log: (data: string) => void): void {
  const uri = (path: string): string => `test://${path}`;
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [
      { uri: uri('static-text'), name: 'static-text', title: 'Static Text Resource', mimeType: 'text/plain' },
      { uri: uri('static-binary'), name: 'static-binary', title: 'Static Binary Resource', mimeType: 'image/png' },
      { uri: uri('watched-resource'), name: 'watched-resource', title: 'Watched Resource', mimeType: 'text/plain' },
    ],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      { uriTemplate: uri('template/{id}/data'), name: 'template', title: 'Resource Template', mimeType: 'application/json' },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request): ReadResourceResult => {
    const requested = request.params.uri;
    const path = requested.replace(/^test:\/\//, '');
    if (path === 'static-text')
      return { contents: [{ uri: requested, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] };
    if (path === 'static-binary') return { contents: [{ uri: requested, mimeType: 'image/png', blob: pngPixel }] };
    if (path === 'watched-resource') return { contents: [{ uri: requested, mimeType: 'text/plain', text: 'Watched resource content' }] };
    const id = /^template\/([^/]+)\/data$/.exec(path)?.[1];
    if (id !== undefined) {
      return {
        contents: [
          { uri: requested, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) },
        ],
      };
    }
    throw new McpError(ErrorCode.InvalidParams, `Resource not found: ${requested}`);
  });
  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    log(`Subscribed to resource: ${request.params.uri}`);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    log(`Unsubscribed from resource: ${request.params.uri}`);
    return {};
  });
}

function registerPrompts(server: Server): void {
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [
      { name: 'test_simple_prompt', title: 'Simple Test Prompt', description: 'A simple prompt without arguments' },
      {
        name: 'test_prompt_with_arguments',
        title: 'Prompt With Arguments',
        description: 'A prompt with required arguments',
        arguments: [
          { name: 'arg1', description: 'First test argument', required: true },
          { name: 'arg2', description: 'Second test argument', required: true },
        ],
      },
      {
        name: 'test_prompt_with_embedded_resource',
        title: 'Prompt With Embedded Resource',
        description: 'A prompt that includes an embedded resource',
        arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
      },
      { name: 'test_prompt_with_image', title: 'Prompt With Image', description: 'A prompt that includes image content' },
    ],
  }));
  server.setRequestHandler(GetPromptRequestSchema, (request): GetPromptResult => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case 'test_simple_prompt':
        return { messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] };
      case 'test_prompt_with_arguments':
        return {
          messages: [
            {
              role: 'user',
              content: { type: 'text', text: `Prompt with arguments: arg1='${args['arg1'] ?? ''}', arg2='${args['arg2'] ?? ''}'` },
            },
          ],
        };
      case 'test_prompt_with_embedded_resource':
        return {
          messages: [
            {
              role: 'user',
              content: {
                type: 'resource',
                resource: { uri: args['resourceUri'] ?? '', mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
              },
            },
            { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
          ],
        };
      case 'test_prompt_with_image':
        return {
          messages: [
            { role: 'user', content: { type: 'image', data: pngPixel, mimeType: 'image/png' } },
            { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
          ],
        };
      default:
        throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
    }
  });
}
