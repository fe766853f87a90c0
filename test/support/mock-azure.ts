import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join, resolve } from 'node:path';

import { answerResource, resourceOperations } from './mock-azure-resources.ts';

// A real HTTP server on loopback speaking Azure OpenAI's wire format, bodies from
// test/fixtures/azure/ (modelled on Azure's REST reference): classic deployment URLs
// (`/openai/deployments/{deployment}/...?api-version=`) and the v1 API (`/openai/v1/...`,
// deployment in the body's `model`). It checks the `api-key` header (or an Entra ID bearer
// token) and answers per deployment name: `filtered` -> 400 content_filter, `throttled` ->
// 429, `broken` -> 500, `cutoff` -> a stream cut after two chunks; a deployment not in `deployments` -> 404.

const fixtures = resolve(import.meta.dirname, '..', 'fixtures', 'azure');
export const azureFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');
const streamFrames = azureFixture('chat-stream.txt')
  .split('\n\n')
  .filter((frame) => frame !== '')
  .map((frame) => `${frame}\n\n`);

export interface AzureRecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface MockAzureOptions {
  apiKey: string;
  /** Accepted as `Authorization: Bearer <entraToken>`. */
  entraToken?: string;
  /** Deployment names that exist (plus the magic ones). */
  deployments: string[];
}

export interface MockAzure {
  /** The resource endpoint, e.g. http://127.0.0.1:40123 (the `base_url` of an `azure` instance). */
  readonly url: string;
  readonly requests: AzureRecordedRequest[];
  close(): Promise<void>;
}

const magic = new Set(['filtered', 'throttled', 'cutoff', 'broken']);

export async function startMockAzure(options: MockAzureOptions): Promise<MockAzure> {
  const requests: AzureRecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => void handle(request, response, options, requests));
  server.on('connection', (socket) => (sockets.add(socket), socket.once('close', () => sockets.delete(socket))));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  options: MockAzureOptions,
  log: AzureRecordedRequest[],
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const url = new URL(request.url ?? '/', 'http://mock');
  const text = Buffer.concat(chunks).toString('utf8');
  const body = parseBody(text);
  log.push({ method: request.method ?? '', path: url.pathname, query: url.searchParams, headers: request.headers, body });
  const send = (status: number, payload: string, headers: Record<string, string> = {}): void => {
    response.writeHead(status, { 'content-type': 'application/json', 'apim-request-id': 'mock-apim-1', ...headers });
    response.end(payload);
  };
  const authorized =
    request.headers['api-key'] === options.apiKey ||
    (options.entraToken !== undefined && request.headers.authorization === `Bearer ${options.entraToken}`);
  if (!authorized) return send(401, azureFixture('unauthorized-error.json'));
  const route = routeOf(url);
  if (route === null) return send(404, '{"error":{"code":"404","message": "Resource not found"}}');
  if (route.operation === 'models')
    return send(200, JSON.stringify({ object: 'list', data: options.deployments.map((id) => ({ id, object: 'model', created: 1 })) }));
  if (route.deployment === null && /^(files|batches)/.test(route.operation))
    return void answerResource(request.method ?? '', route.operation, response);
  const deployment = route.deployment ?? (typeof body['model'] === 'string' ? body['model'] : '');
  if (!magic.has(deployment) && !options.deployments.includes(deployment))
    return send(404, azureFixture('deployment-not-found-error.json'));
  if (deployment === 'filtered') return send(400, azureFixture('content-filter-error.json'));
  if (deployment === 'broken')
    return send(
      500,
      '{"error":{"code":"InternalServerError","message":"The server had an error while processing your request. Sorry about that!"}}',
    );
  if (deployment === 'throttled') return send(429, azureFixture('rate-limit-error.json'), { 'retry-after': '7' });
  if (resourceOperations.test(route.operation)) return void answerResource(request.method ?? '', route.operation, response);
  if (route.operation === 'embeddings') return send(200, azureFixture('embeddings.json'));
  if (route.operation === 'responses') {
    const version = url.searchParams.get('api-version');
    if (version !== null && version < '2025-03-01')
      return send(
        400,
        '{"error":{"code":"BadRequest","message":"Azure OpenAI Responses API is enabled only for api-version 2025-03-01-preview and later"}}',
      );
    return send(200, azureFixture('response.json'));
  }
  if (body['stream'] === true) return stream(response, body, deployment === 'cutoff');
  send(200, azureFixture(Array.isArray(body['tools']) ? 'chat-tool-call.json' : 'chat-completion.json'));
}

const perDeployment =
  /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings|audio\/(?:speech|transcriptions)|images\/generations)$/;

function routeOf(url: URL): { operation: string; deployment: string | null } | null {
  const v1 = /^\/openai\/v1\/(.+)$/.exec(url.pathname)?.[1];
  if (v1 !== undefined) return { operation: v1, deployment: null };
  if (!url.searchParams.get('api-version')) return null;
  const classic = perDeployment.exec(url.pathname);
  if (classic) return { operation: classic[2] as string, deployment: decodeURIComponent(classic[1] as string) };
  const rest = /^\/openai\/(responses|files.*|batches.*)$/.exec(url.pathname)?.[1];
  return rest === undefined ? null : { operation: rest, deployment: null };
}

function stream(response: ServerResponse, body: Record<string, unknown>, cutoff: boolean): void {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const withUsage = (body['stream_options'] as { include_usage?: unknown } | undefined)?.include_usage === true;
  const frames = withUsage ? streamFrames : streamFrames.filter((frame) => !frame.includes('"usage":{'));
  if (cutoff) {
    response.write(frames.slice(0, 3).join(''));
    setTimeout(() => response.socket?.destroy(), 50);
    return;
  }
  response.end(frames.join(''));
}

function parseBody(text: string): Record<string, unknown> {
  try {
    return text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
