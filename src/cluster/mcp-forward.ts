import cluster from 'node:cluster';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';

// An MCP session lives in the worker that opened it (its transport and SDK server are objects
// of that process). Its id starts with `w<worker id>-`; a request carrying it that the cluster
// hands to another worker is relayed, as it arrives, to the owner's private loopback port.

const ownerPattern = /^w(\d+)-/;

/** What this process's MCP session ids start with: its worker id in a cluster, nothing otherwise. */
export function mcpSessionIdPrefix(): string {
  return cluster.isWorker && cluster.worker !== undefined ? `w${cluster.worker.id}-` : '';
}

/** The worker that issued an MCP session id, or null for an id without the prefix. */
export function sessionOwner(sessionId: string | string[] | undefined): number | null {
  const value = Array.isArray(sessionId) ? sessionId[0] : sessionId;
  const match = value === undefined ? null : ownerPattern.exec(value);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/**
 * The onRequest hook relaying `/mcp` requests of another worker's session to it (an unknown
 * owner, e.g. a worker that died, is answered here: `mcp_session_not_found`).
 */
export function mcpForwarder(self: number, ports: ReadonlyMap<number, number>): onRequestHookHandler {
  return (request, reply, done) => {
    if (!request.url.startsWith('/mcp')) return done();
    const owner = sessionOwner(request.headers['mcp-session-id']);
    const port = owner === null || owner === self ? undefined : ports.get(owner);
    if (port === undefined) return done();
    reply.hijack();
    relay(request.raw, reply.raw, port);
    done();
  };
}

function relay(incoming: IncomingMessage, outgoing: ServerResponse, port: number): void {
  const upstream = httpRequest(
    { host: '127.0.0.1', port, method: incoming.method, path: incoming.url, headers: incoming.headers },
    (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    },
  );
  upstream.on('error', () => {
    if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'application/json; charset=utf-8' });
    outgoing.end();
  });
  // A client that goes away ends the relayed request too (GET notification streams).
  outgoing.on('close', () => upstream.destroy());
  incoming.pipe(upstream);
}

/** The worker's private loopback port: the same routes, for requests relayed by other workers. */
export async function listenPrivately(app: FastifyInstance): Promise<{ server: Server; port: number }> {
  const server = createServer((incoming, outgoing) => app.server.emit('request', incoming, outgoing));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // exclusive: a port of this worker's own, not a handle shared through the primary.
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => resolve());
  });
  const address = server.address();
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0 };
}
