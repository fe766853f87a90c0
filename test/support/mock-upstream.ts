import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { completionJson, errorJson, readChatRequest, streamFrames } from './mock-openai-wire.ts';
import type { ChatRequest } from './mock-openai-wire.ts';

export { MOCK_COMPLETION_TOKENS, MOCK_CONTENT, MOCK_PROMPT_TOKENS } from './mock-openai-wire.ts';

// A real HTTP server on loopback speaking the OpenAI wire format, for e2e tests and the
// benchmark. The behaviour of a chat request is chosen by its model: setBehavior(model),
// else a magic model name (error-500, hang, slow, tool-model, ...), else the default.

export type MockBehavior =
  | { kind: 'ok' }
  | { kind: 'error'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'latency'; ms: number }
  | { kind: 'tool_call'; name: string; arguments: string };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON, or undefined when the body is empty or not JSON. */
  body: unknown;
  /** The client closed the connection before the response ended. */
  aborted: boolean;
  completed: boolean;
}

/** What a custom route handler sees; `path` is relative to /v1 (e.g. `/embeddings`). */
export interface MockRequest {
  method: string;
  path: string;
  /** The query string without `?`, '' when absent. */
  query: string;
  headers: IncomingHttpHeaders;
  /** The body as received, bytes intact (multipart, audio). */
  raw: Buffer;
  rawBody: string;
  body: unknown;
}

/** Answers one request on a custom route (see MockUpstream.route). */
export type MockRouteHandler = (request: MockRequest, response: ServerResponse) => void | Promise<void>;

export interface MockUpstreamOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Ids listed by GET /models. Default ['mock-model', 'mock-model-2']. */
  models?: string[];
  /** Record requests (default true; the benchmark turns it off). */
  record?: boolean;
  /** Content chunks per stream. Default 5. */
  chunkCount?: number;
  /** Delay between stream chunks. Default 0. */
  chunkDelayMs?: number;
  /** Without a delay, write each frame in its own event-loop turn (a proxy then gets separate reads). Default false: one write. */
  chunkTurns?: boolean;
  /** Delay before every chat answer. Default 0. */
  latencyMs?: number;
  /** When set, requests without `Authorization: Bearer <apiKey>` get 401. */
  apiKey?: string;
}

export interface MockUpstream {
  /** Base URL including /v1, e.g. http://127.0.0.1:40123/v1. */
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  setBehavior(model: string, behavior: MockBehavior): void;
  /**
   * Serves `method path` (relative to /v1; a path ending in `*` matches by prefix) with a
   * handler; custom routes win over the built-in ones and survive reset().
   */
  route(method: string, path: string, handler: MockRouteHandler): void;
  setDefaultBehavior(behavior: MockBehavior): void;
  setModels(models: string[]): void;
  /** Status of GET /models: anything but 200 answers an error body. */
  setModelsStatus(status: number): void;
  /** Clears recorded requests, behaviours (per model and default) and the models status. */
  reset(): void;
  /** Polls until the predicate holds; rejects after timeoutMs (default 10 s: a loaded machine). */
  waitFor(predicate: (requests: RecordedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Closes the server and destroys open sockets, hanging requests included. */
  close(): Promise<void>;
}

const WEATHER_ARGUMENTS = '{"city":"Paris"}';
const MAGIC_BEHAVIORS = new Map<string, MockBehavior>([
  ['error-500', { kind: 'error', status: 500 }],
  ['error-503', { kind: 'error', status: 503 }],
  ['error-429', { kind: 'error', status: 429, headers: { 'Retry-After': '7' } }],
  ['error-401', { kind: 'error', status: 401 }],
  ['error-404', { kind: 'error', status: 404 }],
  ['error-400', { kind: 'error', status: 400 }],
  ['hang', { kind: 'hang' }],
  ['slow', { kind: 'latency', ms: 200 }],
  ['tool-model', { kind: 'tool_call', name: 'get_weather', arguments: WEATHER_ARGUMENTS }],
]);
const SLOW_STREAM_MODEL = 'slow-stream';
const JSON_HEADERS = { 'Content-Type': 'application/json' };
const SSE_HEADERS = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' };

interface Plan {
  behavior: MockBehavior;
  latencyMs: number;
  chunkCount: number;
  chunkDelayMs: number;
  chunkTurns: boolean;
}

/** One request/response pair. The abort controller exists only once something waits. */
interface Exchange {
  readonly response: ServerResponse;
  closed: boolean;
  controller: AbortController | undefined;
}

/** Resolves true when `waiting` settles normally, false when the exchange closed first. */
function until(exchange: Exchange, waiting: (signal: AbortSignal) => Promise<unknown>): Promise<boolean> {
  if (exchange.closed) return Promise.resolve(false);
  exchange.controller ??= new AbortController();
  return waiting(exchange.controller.signal).then(
    () => !exchange.closed,
    () => false,
  );
}

function delay(exchange: Exchange, ms: number): Promise<boolean> {
  return until(exchange, (signal) => sleep(ms, undefined, { signal }));
}

/** Writes SSE frames; with a delay between them, one at a time and with backpressure. */
async function writeFrames(exchange: Exchange, frames: string[], delayMs: number, turns = false): Promise<void> {
  const { response } = exchange;
  response.writeHead(200, SSE_HEADERS);
  if (delayMs <= 0 && turns) {
    for (const frame of frames) {
      if (exchange.closed) return;
      response.write(frame);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    response.end();
    return;
  }
  if (delayMs <= 0) {
    response.end(frames.join('')); // one chunk: about half the CPU of a write per frame
    return;
  }
  for (const [index, frame] of frames.entries()) {
    if (index > 0 && !(await delay(exchange, delayMs))) return;
    if (exchange.closed) return;
    if (response.write(frame)) continue;
    if (!(await until(exchange, (signal) => once(response, 'drain', { signal })))) return;
  }
  response.end();
}

function sendJson(response: ServerResponse, status: number, json: string, headers?: Record<string, string>): void {
  response.writeHead(status, headers === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...headers });
  response.end(json);
}

function sendError(response: ServerResponse, behavior: { status: number; body?: unknown; headers?: Record<string, string> }): void {
  const { body, status } = behavior;
  const json = body === undefined ? errorJson(status) : typeof body === 'string' ? body : JSON.stringify(body);
  sendJson(response, status, json, behavior.headers);
}

class MockUpstreamServer implements MockUpstream {
  readonly requests: RecordedRequest[] = [];
  readonly server: Server;
  url = '';
  port = 0;
  private readonly options: MockUpstreamOptions;
  private readonly behaviors = new Map<string, MockBehavior>();
  private defaultBehavior: MockBehavior = { kind: 'ok' };
  private modelsJson = '';
  private modelsStatus = 200;
  private counter = 0;
  private readonly sockets = new Set<Socket>();
  private readonly customRoutes: { method: string; path: string; handler: MockRouteHandler }[] = [];
  private readonly expectedAuthorization: string | undefined;

  constructor(options: MockUpstreamOptions) {
    this.options = options;
    this.expectedAuthorization = options.apiKey === undefined ? undefined : `Bearer ${options.apiKey}`;
    this.setModels(options.models ?? ['mock-model', 'mock-model-2']);
    this.server = createServer((request, response) => this.receive(request, response));
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.keepAliveTimeout = 65_000;
    this.server.headersTimeout = 66_000;
  }

  setBehavior(model: string, behavior: MockBehavior): void {
    this.behaviors.set(model, behavior);
  }

  setDefaultBehavior(behavior: MockBehavior): void {
    this.defaultBehavior = behavior;
  }

  setModels(models: string[]): void {
    const data = models.map((id) => ({
      id,
      object: 'model',
      created: 1700000000,
      owned_by: 'mock',
    }));
    this.modelsJson = JSON.stringify({ object: 'list', data });
  }

  setModelsStatus(status: number): void {
    this.modelsStatus = status;
  }

  reset(): void {
    this.requests.length = 0;
    this.behaviors.clear();
    this.defaultBehavior = { kind: 'ok' };
    this.modelsStatus = 200;
  }

  route(method: string, path: string, handler: MockRouteHandler): void {
    this.customRoutes.push({ method: method.toUpperCase(), path, handler });
  }

  async waitFor(predicate: (requests: RecordedRequest[]) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.requests)) {
      if (Date.now() >= deadline) throw new Error(`mock upstream: condition not met within ${timeoutMs} ms`);
      await sleep(10);
    }
  }

  async close(): Promise<void> {
    const socketsClosed = [...this.sockets].map((socket) => once(socket, 'close'));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    await Promise.all(socketsClosed); // responses emit 'close' (and update records) before this
  }

  private receive(request: IncomingMessage, response: ServerResponse): void {
    const url = request.url ?? '/';
    const queryStart = url.indexOf('?');
    const path = queryStart === -1 ? url : url.slice(0, queryStart);
    const method = request.method ?? 'GET';
    const { headers } = request;
    let record: RecordedRequest | undefined;
    if (this.options.record ?? true) {
      record = {
        method,
        path,
        headers,
        rawBody: '',
        body: undefined,
        aborted: false,
        completed: false,
      };
      this.requests.push(record);
    }
    const exchange: Exchange = { response, closed: false, controller: undefined };
    response.on('close', () => {
      exchange.closed = true;
      exchange.controller?.abort();
      if (record === undefined) return;
      record.completed = response.writableFinished;
      record.aborted = !response.writableFinished;
    });
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const rawBody = raw.toString();
      let body: unknown;
      try {
        body = rawBody === '' ? undefined : JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      if (record !== undefined) {
        record.rawBody = rawBody;
        record.body = body;
      }
      const custom = this.customRouteFor(method, path);
      const authorized = this.expectedAuthorization === undefined || headers.authorization === this.expectedAuthorization;
      if (custom !== undefined && authorized) {
        const relative = path.startsWith('/v1/') ? path.slice(3) : path;
        const query = queryStart === -1 ? '' : url.slice(queryStart + 1);
        Promise.resolve(custom({ method, path: relative, query, headers, raw, rawBody, body }, response)).catch((error: unknown) => {
          if (!response.headersSent) sendJson(response, 500, errorJson(500, `mock upstream: handler failed: ${String(error)}`));
          else response.destroy();
        });
        return;
      }
      this.dispatch(exchange, { method, path, headers, rawBody, body });
    });
  }

  private customRouteFor(method: string, path: string): MockRouteHandler | undefined {
    const relative = path.startsWith('/v1/') ? path.slice(3) : path;
    for (const route of this.customRoutes) {
      if (route.method !== method) continue;
      const matches = route.path.endsWith('*') ? relative.startsWith(route.path.slice(0, -1)) : relative === route.path;
      if (matches) return route.handler;
    }
    return undefined;
  }

  private dispatch(exchange: Exchange, request: Pick<RecordedRequest, 'method' | 'path' | 'headers' | 'rawBody' | 'body'>): void {
    const { response } = exchange;
    const { method, path } = request;
    if (this.expectedAuthorization !== undefined && request.headers.authorization !== this.expectedAuthorization) {
      sendJson(response, 401, errorJson(401, 'mock upstream: incorrect API key provided'));
      return;
    }
    const route = path.startsWith('/v1/') ? path.slice(3) : path;
    if (method === 'GET' && route === '/models') {
      const status = this.modelsStatus;
      sendJson(response, status, status === 200 ? this.modelsJson : errorJson(status));
    } else if (method === 'POST' && route === '/chat/completions') {
      const chat = readChatRequest(request.body);
      if (chat !== undefined) {
        void this.answerChat(exchange, chat);
        return;
      }
      const invalidJson = request.rawBody !== '' && request.body === undefined;
      const problem = invalidJson ? 'invalid JSON body' : 'model must be a string';
      sendJson(response, 400, errorJson(400, `mock upstream: ${problem}`));
    } else {
      sendJson(response, 404, errorJson(404, `mock upstream: unknown route ${method} ${path}`));
    }
  }

  private plan(chat: ChatRequest): Plan {
    let behavior = this.behaviors.get(chat.model) ?? MAGIC_BEHAVIORS.get(chat.model) ?? this.defaultBehavior;
    const latencyMs = (this.options.latencyMs ?? 0) + (behavior.kind === 'latency' ? behavior.ms : 0);
    if ((behavior.kind === 'ok' || behavior.kind === 'latency') && chat.firstToolName !== undefined) {
      behavior = { kind: 'tool_call', name: chat.firstToolName, arguments: WEATHER_ARGUMENTS };
    }
    const slowStream = chat.model === SLOW_STREAM_MODEL;
    return {
      behavior,
      latencyMs,
      chunkCount: slowStream ? 40 : (this.options.chunkCount ?? 5),
      chunkDelayMs: slowStream ? 50 : (this.options.chunkDelayMs ?? 0),
      chunkTurns: this.options.chunkTurns ?? false,
    };
  }

  private async answerChat(exchange: Exchange, chat: ChatRequest): Promise<void> {
    const plan = this.plan(chat);
    const { behavior } = plan;
    if (behavior.kind === 'hang') return;
    if (plan.latencyMs > 0 && !(await delay(exchange, plan.latencyMs))) return;
    if (exchange.closed) return;
    if (behavior.kind === 'error') {
      sendError(exchange.response, behavior);
      return;
    }
    this.counter += 1;
    const toolCall = behavior.kind === 'tool_call' ? behavior : undefined;
    if (chat.stream) {
      const spec = { chat, counter: this.counter, chunkCount: plan.chunkCount, toolCall };
      await writeFrames(exchange, streamFrames(spec), plan.chunkDelayMs, plan.chunkTurns);
    } else {
      sendJson(exchange.response, 200, completionJson(chat, this.counter, toolCall));
    }
  }
}

export async function startMockUpstream(options: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const mock = new MockUpstreamServer(options);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    mock.server.once('error', reject);
    mock.server.listen(options.port ?? 0, host, () => {
      mock.server.off('error', reject);
      resolve();
    });
  });
  mock.port = (mock.server.address() as AddressInfo).port;
  mock.url = `http://${host.includes(':') ? `[${host}]` : host}:${mock.port}/v1`;
  return mock;
}
