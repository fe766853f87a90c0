import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The one model the demo provider serves. */
export const demoModel = 'demo-model';

/** Largest request body the demo provider reads. */
const maxBodyBytes = 1024 * 1024;
const created = 1_700_000_000;

export interface DemoProvider {
  readonly server: Server;
  /** `http://host:port/v1`, the base URL to configure in the gateway. */
  readonly baseUrl: string;
  readonly port: number;
  close(): Promise<void>;
}

interface ChatRequest {
  stream: boolean;
  lastUserText: string;
}

/**
 * A deterministic OpenAI-compatible provider for the demo and the compose file: `GET /v1/models`
 * and `POST /v1/chat/completions` (JSON and SSE). It answers with a fixed sentence that quotes
 * the last user message; it needs no key and calls nothing.
 */
export async function startDemoProvider(host = '127.0.0.1', port = 0): Promise<DemoProvider> {
  const server = createServer((request, response) => {
    void route(request, response).catch(() => sendJson(response, 500, errorBody('internal error')));
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolveListen());
  });
  const address = server.address() as AddressInfo;
  const shownHost = host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    server,
    port: address.port,
    baseUrl: `http://${shownHost}:${address.port}/v1`,
    close: () => new Promise<void>((resolveClose) => server.close(() => resolveClose())),
  };
}

/** The demo's answer to a user message. */
export function demoReply(userText: string): string {
  const quoted = userText.trim().slice(0, 200);
  return `Hello from the Model Gateway demo provider! You said: "${quoted}". This answer came through the gateway without any provider key.`;
}

async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  if (request.method === 'GET' && (path === '/v1/models' || path === '/models')) {
    sendJson(response, 200, { object: 'list', data: [{ id: demoModel, object: 'model', created, owned_by: 'demo' }] });
    return;
  }
  if (request.method === 'GET' && path === '/health') {
    sendJson(response, 200, { status: 'ok' });
    return;
  }
  if (request.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) {
    const chat = parseChat(await readBody(request));
    if (chat === null) {
      sendJson(response, 400, errorBody('expected a JSON chat completion request with messages'));
      return;
    }
    if (chat.stream) sendStream(response, chat.lastUserText);
    else sendJson(response, 200, completion(chat.lastUserText));
    return;
  }
  sendJson(response, 404, errorBody(`the demo provider does not serve ${request.method ?? ''} ${path ?? ''}`));
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) request.destroy(new Error('body too large'));
      else chunks.push(chunk);
    });
    request.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseChat(text: string): ChatRequest | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null) return null;
  const { messages, stream } = body as { messages?: unknown; stream?: unknown };
  if (!Array.isArray(messages)) return null;
  return { stream: stream === true, lastUserText: lastUserText(messages) };
}

function lastUserText(messages: unknown[]): string {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index] as { role?: unknown; content?: unknown } | null;
    if (message?.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    if (Array.isArray(message.content)) {
      return message.content
        .map((part: unknown) => (typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : ''))
        .join(' ');
    }
  }
  return '';
}

function usageOf(userText: string, reply: string): Record<string, number> {
  const promptTokens = Math.max(1, Math.ceil(userText.length / 4));
  const completionTokens = Math.ceil(reply.length / 4);
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

function completion(userText: string): Record<string, unknown> {
  const reply = demoReply(userText);
  return {
    id: 'chatcmpl-demo',
    object: 'chat.completion',
    created,
    model: demoModel,
    choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
    usage: usageOf(userText, reply),
  };
}

function sendStream(response: ServerResponse, userText: string): void {
  const reply = demoReply(userText);
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ id: 'chatcmpl-demo', object: 'chat.completion.chunk', created, model: demoModel, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  response.write(chunk({ role: 'assistant', content: '' }, null));
  for (const word of reply.match(/\S+\s*/g) ?? []) response.write(chunk({ content: word }, null));
  response.write(chunk({}, 'stop', { usage: usageOf(userText, reply) }));
  response.end('data: [DONE]\n\n');
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function errorBody(message: string): Record<string, unknown> {
  return { error: { message, type: 'invalid_request_error', param: null, code: null } };
}
