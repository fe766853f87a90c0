import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// Gemini's Files API (resumable uploads on `/upload/v1beta/files`, as Google runs them: a start
// answered with `x-goog-upload-url`, then `upload, finalize` with the bytes), cached contents and
// a plain generateContent, in memory, on a real loopback server: one shared account that knows
// nothing of tenants. The key must come in `x-goog-api-key`.

export interface GeminiCall {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface MockGeminiAccount {
  /** The native API base, `http://127.0.0.1:<port>/v1beta`. */
  readonly url: string;
  readonly calls: GeminiCall[];
  readonly files: Map<string, { meta: Record<string, unknown>; content: string }>;
  readonly caches: Map<string, Record<string, unknown>>;
  close(): Promise<void>;
}

const googleError = (code: number, status: string, message: string) => ({ error: { code, message, status } });

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
  response.end(JSON.stringify(body));
}

export async function startMockGeminiAccount(apiKey: string): Promise<MockGeminiAccount> {
  const calls: GeminiCall[] = [];
  const files = new Map<string, { meta: Record<string, unknown>; content: string }>();
  const caches = new Map<string, Record<string, unknown>>();
  const uploads = new Map<string, { displayName: string; mimeType: string }>();
  const sockets = new Set<Socket>();
  let counter = 0;
  let origin = '';
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://mock');
      const call: GeminiCall = {
        method: request.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
      };
      calls.push(call);
      if (request.headers['x-goog-api-key'] !== apiKey)
        return send(response, 400, googleError(400, 'INVALID_ARGUMENT', 'API key not valid.'));
      answer(call, response);
    });
  });
  const json = (call: GeminiCall): Record<string, unknown> => (call.body === '' ? {} : (JSON.parse(call.body) as Record<string, unknown>));
  const answer = (call: GeminiCall, response: ServerResponse): void => {
    const { method, path } = call;
    if (method === 'POST' && path === '/upload/v1beta/files') {
      const uploadId = call.query.get('upload_id');
      if (uploadId === null) {
        counter += 1;
        const id = `upload-${counter}`;
        const file = (json(call)['file'] ?? {}) as { displayName?: string };
        uploads.set(id, { displayName: file.displayName ?? '', mimeType: String(call.headers['x-goog-upload-header-content-type']) });
        const uploadUrl = `${origin}/upload/v1beta/files?upload_id=${id}&upload_protocol=resumable`;
        return send(response, 200, {}, { 'x-goog-upload-url': uploadUrl, 'x-goog-upload-status': 'active' });
      }
      const session = uploads.get(uploadId);
      if (session === undefined) return send(response, 404, googleError(404, 'NOT_FOUND', 'upload not found'));
      counter += 1;
      const name = `files/f${counter}`;
      const meta = {
        name,
        displayName: session.displayName,
        mimeType: session.mimeType,
        sizeBytes: String(call.body.length),
        state: 'ACTIVE',
        uri: `${origin}/v1beta/${name}`,
      };
      files.set(name, { meta, content: call.body });
      return send(response, 200, { file: meta }, { 'x-goog-upload-status': 'final' });
    }
    if (method === 'GET' && path === '/v1beta/files') return send(response, 200, { files: [...files.values()].map((file) => file.meta) });
    if (method === 'POST' && path === '/v1beta/cachedContents') {
      counter += 1;
      const body = json(call);
      const cache = {
        name: `cachedContents/c${counter}`,
        model: body['model'],
        displayName: body['displayName'] ?? '',
        usageMetadata: { totalTokenCount: 2048 },
      };
      caches.set(cache.name, cache);
      return send(response, 200, cache);
    }
    if (method === 'GET' && path === '/v1beta/cachedContents') return send(response, 200, { cachedContents: [...caches.values()] });
    const generate = /^\/v1beta\/models\/([^/:]+):generateContent$/.exec(path);
    if (method === 'POST' && generate !== null) {
      return send(response, 200, {
        candidates: [{ content: { role: 'model', parts: [{ text: 'cached answer' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
        modelVersion: generate[1],
      });
    }
    const name = path.replace(/^\/v1beta\//, '');
    const store: Map<string, unknown> = name.startsWith('files/') ? files : caches;
    const found = store.get(name);
    if (found === undefined) return send(response, 404, googleError(404, 'NOT_FOUND', `${name} not found`));
    if (method === 'DELETE') {
      store.delete(name);
      return send(response, 200, {});
    }
    if (method === 'PATCH') Object.assign(found as Record<string, unknown>, json(call));
    send(response, 200, name.startsWith('files/') ? (found as { meta: unknown }).meta : found);
  };
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/v1beta`,
    calls,
    files,
    caches,
    async close() {
      const closed = [...sockets].map((socket) => once(socket, 'close'));
      server.close();
      server.closeAllConnections();
      await Promise.all(closed);
    },
  };
}
