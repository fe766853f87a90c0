import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import {
  MOCK_INPUT_TOKENS,
  MOCK_TOOL_INPUT,
  anthropicErrorJson,
  leadingErrorEvents,
  messageJson,
  messagesRequestProblem,
  modelPageJson,
  streamEvents,
} from './mock-anthropic-wire.ts';
import type { AnswerSpec, MockUsage } from './mock-anthropic-wire.ts';
import { agentAnswer, blocksMessageJson, blocksStreamEvents, richAnswer } from './mock-anthropic-blocks.ts';
import type { MockRequest, MockRouteHandler, RecordedRequest } from './mock-upstream.ts';

export { MOCK_ANTHROPIC_CONTENT, MOCK_INPUT_TOKENS, MOCK_OUTPUT_TOKENS, MOCK_TOOL_INPUT } from './mock-anthropic-wire.ts';
export type { MockRequest, MockRouteHandler, RecordedRequest } from './mock-upstream.ts';

// A real HTTP server on loopback speaking Anthropic's Messages API (JSON and SSE events), for
// end-to-end tests of the native Anthropic adapter and of /v1/messages. As the real API, it
// wants a key and `anthropic-version`, rejects unknown request fields, and answers
// errors as `{"type":"error","error":{type,message}}`. The behaviour of a request is chosen by
// its model: setBehavior(model), else a magic model name (error-429, stream-error, ...), else
// the default; a request with tools is answered with a tool_use of its first tool.

export type AnthropicMockBehavior =
  | { kind: 'ok' }
  | { kind: 'error'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'latency'; ms: number }
  | { kind: 'tool_use'; name: string; input: Record<string, unknown> }
  /** Reports these cache token counts in usage (prompt caching). */
  | { kind: 'cache'; read: number; write: number }
  /** A 200 stream broken by an `error` event after `afterChunks` text deltas (0 = the first event). */
  | { kind: 'stream_error'; afterChunks: number; type: string; message: string }
  /** Signed thinking, text with a citation, a matched stop sequence (mock-anthropic-blocks.ts); cache counts as `cache`. */
  | { kind: 'rich'; read?: number; write?: number }
  /** A tool loop step: text, then a call of the first tool; text alone once a tool_result came back. */
  | { kind: 'agent' }
  /** A long text stream (`chunks` deltas), `delayMs` between frames. */
  | { kind: 'slow_stream'; chunks: number; delayMs: number };

export interface MockAnthropicOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Ids listed by GET /v1/models. Default ['claude-sonnet-4-5', 'claude-haiku-4-5']. */
  models?: string[];
  /** Text deltas per stream. Default 5. */
  chunkCount?: number;
  /** Delay between stream frames. Default 0. */
  chunkDelayMs?: number;
  /** When set, requests without `x-api-key: <apiKey>` (or `Authorization: Bearer <apiKey>`) get 401 authentication_error. */
  apiKey?: string;
}

export interface MockAnthropic {
  /** Base URL including /v1, e.g. http://127.0.0.1:40123/v1. */
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  setBehavior(model: string, behavior: AnthropicMockBehavior): void;
  setDefaultBehavior(behavior: AnthropicMockBehavior): void;
  setModels(models: string[]): void;
  /** Serves `method path` (relative to /v1; `*` suffix = prefix match); wins over built-in routes. */
  route(method: string, path: string, handler: MockRouteHandler): void;
  /** Clears recorded requests and behaviours. */
  reset(): void;
  /** Polls until the predicate holds; rejects after timeoutMs (default 10 s: a loaded machine). */
  waitFor(predicate: (requests: RecordedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const MAGIC_BEHAVIORS = new Map<string, AnthropicMockBehavior>([
  ['error-400', { kind: 'error', status: 400 }],
  ['error-401', { kind: 'error', status: 401 }],
  ['error-403', { kind: 'error', status: 403 }],
  ['error-404', { kind: 'error', status: 404 }],
  ['error-429', { kind: 'error', status: 429, headers: { 'retry-after': '7' } }],
  ['error-500', { kind: 'error', status: 500 }],
  ['error-503', { kind: 'error', status: 503 }],
  ['error-529', { kind: 'error', status: 529, body: anthropicErrorJson(529, 'Overloaded') }],
  ['hang', { kind: 'hang' }],
  ['slow', { kind: 'latency', ms: 200 }],
  ['tool-model', { kind: 'tool_use', name: 'get_weather', input: MOCK_TOOL_INPUT }],
  ['cached-model', { kind: 'cache', read: 100, write: 20 }],
  ['stream-error', { kind: 'stream_error', afterChunks: 2, type: 'overloaded_error', message: 'Overloaded' }],
  ['stream-error-first', { kind: 'stream_error', afterChunks: 0, type: 'overloaded_error', message: 'Overloaded' }],
  ['rich-model', { kind: 'rich', read: 100, write: 20 }],
  ['agent-model', { kind: 'agent' }],
  ['slow-stream', { kind: 'slow_stream', chunks: 200, delayMs: 50 }],
]);
const JSON_HEADERS = { 'content-type': 'application/json' };
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

function send(response: ServerResponse, status: number, json: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { ...JSON_HEADERS, ...headers });
  response.end(json);
}

function firstToolName(body: Record<string, unknown>): string | undefined {
  const tools = body['tools'];
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  const name = (tools[0] as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : 'tool';
}

class MockAnthropicServer implements MockAnthropic {
  readonly requests: RecordedRequest[] = [];
  readonly server: Server;
  url = '';
  port = 0;
  private readonly options: MockAnthropicOptions;
  private readonly behaviors = new Map<string, AnthropicMockBehavior>();
  private defaultBehavior: AnthropicMockBehavior = { kind: 'ok' };
  private models: string[];
  private counter = 0;
  private readonly sockets = new Set<Socket>();
  private readonly customRoutes: { method: string; path: string; handler: MockRouteHandler }[] = [];

  constructor(options: MockAnthropicOptions) {
    this.options = options;
    this.models = options.models ?? ['claude-sonnet-4-5', 'claude-haiku-4-5'];
    this.server = createServer((request, response) => this.receive(request, response));
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  setBehavior(model: string, behavior: AnthropicMockBehavior): void {
    this.behaviors.set(model, behavior);
  }

  setDefaultBehavior(behavior: AnthropicMockBehavior): void {
    this.defaultBehavior = behavior;
  }

  setModels(models: string[]): void {
    this.models = models;
  }

  route(method: string, path: string, handler: MockRouteHandler): void {
    this.customRoutes.push({ method: method.toUpperCase(), path, handler });
  }

  reset(): void {
    this.requests.length = 0;
    this.behaviors.clear();
    this.defaultBehavior = { kind: 'ok' };
  }

  async waitFor(predicate: (requests: RecordedRequest[]) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.requests)) {
      if (Date.now() >= deadline) throw new Error(`mock anthropic: condition not met within ${timeoutMs} ms`);
      await sleep(10);
    }
  }

  async close(): Promise<void> {
    const socketsClosed = [...this.sockets].map((socket) => once(socket, 'close'));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    await Promise.all(socketsClosed);
  }

  private receive(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://mock');
    const method = request.method ?? 'GET';
    const record: RecordedRequest = {
      method,
      path: url.pathname,
      headers: request.headers,
      rawBody: '',
      body: undefined,
      aborted: false,
      completed: false,
    };
    this.requests.push(record);
    response.on('close', () => {
      record.completed = response.writableFinished;
      record.aborted = !response.writableFinished;
    });
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      record.rawBody = raw.toString();
      try {
        record.body = record.rawBody === '' ? undefined : JSON.parse(record.rawBody);
      } catch {
        record.body = undefined;
      }
      const relative = url.pathname.startsWith('/v1/') ? url.pathname.slice(3) : url.pathname;
      const mockRequest: MockRequest = {
        method,
        path: relative,
        query: url.search.slice(1),
        headers: request.headers,
        raw,
        rawBody: record.rawBody,
        body: record.body,
      };
      void this.dispatch(mockRequest, url, response);
    });
  }

  private async dispatch(request: MockRequest, url: URL, response: ServerResponse): Promise<void> {
    const { method, path } = request;
    const custom = this.customRoutes.find(
      (route) => route.method === method && (route.path.endsWith('*') ? path.startsWith(route.path.slice(0, -1)) : path === route.path),
    );
    if (custom !== undefined) {
      await Promise.resolve(custom.handler(request, response)).catch(() => response.destroy());
      return;
    }
    // The API takes the key as `x-api-key` or, from newer SDKs, as `Authorization: Bearer`.
    const key = request.headers['x-api-key'] ?? request.headers.authorization?.replace(/^Bearer /i, '');
    if (this.options.apiKey !== undefined && key !== this.options.apiKey) {
      send(response, 401, anthropicErrorJson(401, 'invalid x-api-key'));
    } else if (request.headers['anthropic-version'] === undefined) {
      send(response, 400, anthropicErrorJson(400, 'anthropic-version: header is required'));
    } else if (method === 'GET' && path === '/models') {
      const limit = Number(url.searchParams.get('limit') ?? '20');
      send(response, 200, modelPageJson(this.models, limit, url.searchParams.get('after_id')));
    } else if (method === 'POST' && path === '/messages/count_tokens') {
      send(response, 200, JSON.stringify({ input_tokens: MOCK_INPUT_TOKENS }));
    } else if (method === 'POST' && path === '/messages') {
      // Fields of a beta the request names (`anthropic-beta`) are accepted as the API does.
      const problem = request.headers['anthropic-beta'] === undefined ? messagesRequestProblem(request.body) : null;
      if (problem !== null) send(response, 400, anthropicErrorJson(400, problem));
      else await this.answer(request.body as Record<string, unknown>, response);
    } else {
      send(response, 404, anthropicErrorJson(404, `Not found: ${method} ${path}`));
    }
  }

  private async answer(body: Record<string, unknown>, response: ServerResponse): Promise<void> {
    const model = body['model'] as string;
    let behavior = this.behaviors.get(model) ?? MAGIC_BEHAVIORS.get(model) ?? this.defaultBehavior;
    if (behavior.kind === 'hang') return;
    if (behavior.kind === 'latency') {
      await sleep(behavior.ms);
      behavior = { kind: 'ok' };
    }
    if (behavior.kind === 'error') {
      const json =
        behavior.body === undefined
          ? anthropicErrorJson(behavior.status)
          : typeof behavior.body === 'string'
            ? behavior.body
            : JSON.stringify(behavior.body);
      send(response, behavior.status, json, behavior.headers);
      return;
    }
    this.counter += 1;
    const tool = firstToolName(body);
    const toolUse = behavior.kind === 'tool_use' ? behavior : tool === undefined ? undefined : { name: tool, input: MOCK_TOOL_INPUT };
    const usage: MockUsage = {
      input_tokens: MOCK_INPUT_TOKENS,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 0,
    };
    if (behavior.kind === 'cache' || behavior.kind === 'rich')
      Object.assign(usage, { cache_read_input_tokens: behavior.read ?? 0, cache_creation_input_tokens: behavior.write ?? 0 });
    if (behavior.kind === 'rich' || behavior.kind === 'agent') {
      const blocks = behavior.kind === 'rich' ? richAnswer() : agentAnswer(body, this.counter);
      if (body['stream'] === true) await this.writeFrames(response, blocksStreamEvents(blocks, model, this.counter, usage));
      else send(response, 200, blocksMessageJson(blocks, model, this.counter, usage));
      return;
    }
    const chunkCount = behavior.kind === 'slow_stream' ? behavior.chunks : (this.options.chunkCount ?? 5);
    const spec: AnswerSpec = { model, counter: this.counter, usage, toolUse, chunkCount };
    if (body['stream'] !== true) {
      send(response, 200, messageJson(spec));
      return;
    }
    let frames = streamEvents(spec);
    if (behavior.kind === 'stream_error') {
      const { afterChunks, type, message } = behavior;
      frames =
        afterChunks === 0
          ? leadingErrorEvents(type, message)
          : streamEvents({ ...spec, toolUse: undefined, streamError: { afterChunks, type, message } });
    }
    await this.writeFrames(response, frames, behavior.kind === 'slow_stream' ? behavior.delayMs : undefined);
  }

  private async writeFrames(response: ServerResponse, frames: string[], delay?: number): Promise<void> {
    response.writeHead(200, SSE_HEADERS);
    const delayMs = delay ?? this.options.chunkDelayMs ?? 0;
    for (const [index, frame] of frames.entries()) {
      if (response.destroyed) return;
      if (index > 0 && delayMs > 0) await sleep(delayMs);
      if (!response.write(frame)) await Promise.race([once(response, 'drain'), once(response, 'close')]).catch(() => undefined);
    }
    response.end();
  }
}

export async function startMockAnthropic(options: MockAnthropicOptions = {}): Promise<MockAnthropic> {
  const mock = new MockAnthropicServer(options);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    mock.server.once('error', reject);
    mock.server.listen(0, host, () => {
      mock.server.off('error', reject);
      resolve();
    });
  });
  mock.port = (mock.server.address() as AddressInfo).port;
  mock.url = `http://${host}:${mock.port}/v1`;
  return mock;
}
