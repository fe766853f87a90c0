import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';

// Relay endpoints under hostile paths: a request sent with raw bytes on a socket (so no client
// normalises its path first) never reaches an upstream URL outside the instance's base URL.

interface RawExchange {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** One HTTP/1.1 exchange written byte for byte (the path exactly as given). */
function exchange(port: number, method: string, path: string): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, text: body });
    });
    socket.write(
      `${method} ${path} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${MASTER_KEY}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
  });
}

describe('relay paths stay under the instance base URL', () => {
  let upstream: Server;
  let gateway: GatewayProcess;
  const seen: string[] = [];

  beforeAll(async () => {
    upstream = createServer((request, response) => {
      seen.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ path: request.url }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/tenant-a/v1`;
    gateway = await startGateway({
      env: { MASTER_KEY },
      configYaml: `providers:\n  openai:\n    type: openai\n    api_key: sk-up\n    base_url: ${base}\n    models: [m]\n`,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  beforeEach(() => {
    seen.length = 0;
  });

  it('refuses dot segments in a passthrough path, encoded or not, with a 400 envelope and no upstream call', async () => {
    const paths = [
      '/p/openai/../../x',
      '/p/openai/%2e%2e/%2e%2e/x',
      '/p/openai/a/..%2f..%2f..%2fx',
      '/p/openai/%2E%2E%2F%2E%2E%2Fx',
      '/p/openai/v1/..',
      '/p/openai/.%2e/.%2e/x',
    ];
    for (const path of paths) {
      const reply = await exchange(gateway.port, 'GET', path);
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'invalid_path' });
    }
    expect(seen).toEqual([]);
  });

  it('relays an encoded path as sent: %3F stays in the path and never starts a query', async () => {
    const reply = await exchange(gateway.port, 'GET', '/p/openai/things%3Fa=1/x%2Fy?q=2');
    expect(reply.status).toBe(200);
    expect(seen).toEqual(['/tenant-a/v1/things%3Fa=1/x%2Fy?q=2']);
  });

  it('refuses a file or batch id that is a dot segment', async () => {
    for (const [method, path] of [
      ['GET', '/v1/files/..'],
      ['GET', '/v1/files/%2e%2e/content'],
      ['DELETE', '/v1/files/%2E%2E'],
      ['GET', '/v1/batches/..'],
      ['POST', '/v1/batches/%2E%2E/cancel'],
    ] as const) {
      const reply = await exchange(gateway.port, method, path);
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'invalid_path' });
    }
    expect(seen).toEqual([]);
  });
});
