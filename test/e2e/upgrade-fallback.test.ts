import { connect } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewayEnv, type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// `curl --http2` on a cleartext URL (and other h2c clients) asks every request to upgrade to
// HTTP/2. The server may ignore that (RFC 9110 section 7.8): such requests are answered as
// plain HTTP/1.1, not routed to the realtime WebSocket handler.

/** Writes `text` on a fresh socket and resolves with everything read until the server closes. */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('error', reject);
    socket.write(text);
  });
}

function statusesOf(reply: string): Array<string | undefined> {
  return [...reply.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1]);
}

const h2cHeaders = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';

describe('requests that offer an HTTP/2 (h2c) upgrade', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: gatewayEnv(mock) });
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('are served as HTTP/1.1, the body and the next request on the connection included', async () => {
    const health = await exchange(
      gateway.port,
      `GET /health HTTP/1.1\r\nHost: gateway\r\n${h2cHeaders}\r\n` + `GET /health HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n`,
    );
    expect(statusesOf(health), health).toEqual(['200', '200']);
    expect(health).toContain('{"status":"ok"}');

    const body = JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'hi' }] });
    const chat = await exchange(
      gateway.port,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n${h2cHeaders}Authorization: Bearer ${MASTER_KEY}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` +
        `GET /v1/models HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${MASTER_KEY}\r\nConnection: close\r\n\r\n`,
    );
    expect(statusesOf(chat), chat).toEqual(['200', '200']);
    expect(chat).toContain('"object":"chat.completion"');
    expect(chat).toContain('"object":"list"');
  });
});
