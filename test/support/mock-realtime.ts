import { once } from 'node:events';
import { createServer, STATUS_CODES } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';

// A realtime upstream on loopback speaking enough of OpenAI's Realtime WebSocket protocol
// for the relay tests: `session.created` on connect, `response.created` + `response.done`
// (with usage) for each `response.create`, an echo of every other text event, binary frames
// echoed as they came, and `{"type":"test.close","code":N}` closes the session with code N.

export const MOCK_REALTIME_USAGE = {
  total_tokens: 15,
  input_tokens: 10,
  output_tokens: 5,
  input_token_details: { cached_tokens: 2, text_tokens: 10, audio_tokens: 0 },
  output_token_details: { text_tokens: 5, audio_tokens: 0 },
};

export interface RealtimeConnection {
  /** The upgrade request's path and query. */
  readonly url: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** Frames received from the gateway, in order. */
  readonly frames: Array<{ data: Buffer; binary: boolean }>;
  /** The close code the session ended with, once it ended. */
  closeCode: number | null;
  readonly socket: WebSocket;
}

export interface Refusal {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

export interface MockRealtime {
  /** Base URL including /v1, e.g. http://127.0.0.1:40123/v1 (the gateway turns it into ws://). */
  readonly url: string;
  readonly connections: RealtimeConnection[];
  /** Answers the next upgrades with an HTTP error instead (null accepts again). */
  refuseWith(refusal: Refusal | null): void;
  /** Number of refused upgrade attempts. */
  readonly refused: number;
  waitFor(predicate: (connections: RealtimeConnection[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

class MockRealtimeServer implements MockRealtime {
  readonly connections: RealtimeConnection[] = [];
  readonly server: Server;
  url = '';
  refused = 0;
  private refusal: Refusal | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly wss = new WebSocketServer({ noServer: true });

  constructor() {
    this.server = createServer((_request, response) => {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end('{"error":{"message":"mock realtime: not a WebSocket request"}}');
    });
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('upgrade', (request, socket, head) => {
      const refusal = this.refusal;
      if (refusal !== null) {
        this.refused += 1;
        const headers = {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(refusal.body)),
          ...refusal.headers,
        };
        const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
        socket.end(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? 'Error'}\r\n${lines.join('\r\n')}\r\n\r\n${refusal.body}`);
        return;
      }
      this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, request.url ?? '/', request.headers));
    });
  }

  refuseWith(refusal: Refusal | null): void {
    this.refusal = refusal;
  }

  async waitFor(predicate: (connections: RealtimeConnection[]) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.connections)) {
      if (Date.now() >= deadline) throw new Error(`mock realtime: condition not met within ${timeoutMs} ms`);
      await sleep(10);
    }
  }

  async close(): Promise<void> {
    for (const connection of this.connections) connection.socket.terminate();
    const socketsClosed = [...this.sockets].map((socket) => once(socket, 'close'));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
      for (const socket of this.sockets) socket.destroy();
    });
    await Promise.all(socketsClosed);
  }

  private accept(ws: WebSocket, url: string, headers: IncomingHttpHeaders): void {
    const query = new URL(url, 'http://mock.invalid').searchParams;
    const connection: RealtimeConnection = { url, query, headers, frames: [], closeCode: null, socket: ws };
    this.connections.push(connection);
    const send = (event: Record<string, unknown>): void => ws.send(JSON.stringify(event));
    ws.on('close', (code) => {
      connection.closeCode = code;
    });
    ws.on('message', (data: Buffer, binary) => {
      connection.frames.push({ data, binary });
      if (binary) {
        ws.send(data, { binary: true });
        return;
      }
      const event = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      if (event['type'] === 'test.close') ws.close(Number(event['code']), 'closed by the mock');
      else if (event['type'] === 'response.create') {
        send({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress' } });
        send({ type: 'response.done', response: { id: 'resp_1', status: 'completed', usage: MOCK_REALTIME_USAGE } });
      } else send({ type: 'test.echo', event });
    });
    send({ type: 'session.created', session: { id: `sess_${this.connections.length}`, model: query.get('model') } });
  }
}

export async function startMockRealtime(): Promise<MockRealtime> {
  const mock = new MockRealtimeServer();
  await new Promise<void>((resolve) => mock.server.listen(0, '127.0.0.1', resolve));
  mock.url = `http://127.0.0.1:${(mock.server.address() as AddressInfo).port}/v1`;
  return mock;
}
