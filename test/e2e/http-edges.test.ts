import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { bearer, chatBody, type RawReply, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// The HTTP edges (issues 14.4, 15.8, 15.9): an upload over BODY_SIZE_LIMIT reaches the client as the
// 413 envelope (not a broken pipe), errors of the HTTP parser answer the envelope, and slow clients
// are bounded while receiving the request, never while the answer streams.

const LIMIT = 1024 * 1024;

describe('HTTP edges', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    // A stream of 12 chunks 300 ms apart outlives BODY_TIMEOUT_SECONDS.
    mock = await startMockUpstream({ chunkCount: 12, chunkDelayMs: 300 });
    const env = gatewayEnv(mock, { BODY_SIZE_LIMIT: '1MB', HEADERS_TIMEOUT_SECONDS: '1', BODY_TIMEOUT_SECONDS: '2' });
    gateway = await startGateway({ env, startTimeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  describe('a body over BODY_SIZE_LIMIT sent with Content-Length', () => {
    it('states the limit and the setting in the 413 message', async () => {
      const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: bearer(),
        body: chatBody('openai/mock-model', { messages: [{ role: 'user', content: 'a'.repeat(LIMIT + 10) }] }),
      });
      const error = expectEnvelope(reply, { status: 413, type: 'invalid_request_error', code: 'body_too_large' });
      expect(error.message).toContain(`1MB (${LIMIT} bytes)`);
      expect(error.message).toContain('BODY_SIZE_LIMIT');
    });

    it('reaches a node http client as the 413 envelope, 20 times out of 20', async () => {
      const outcomes: string[] = [];
      for (let attempt = 0; attempt < 20; attempt += 1) {
        const reply = await uploadWithNodeHttp(gateway.port, 2 * LIMIT);
        if ('error' in reply) {
          outcomes.push(reply.error);
          continue;
        }
        expectEnvelope(reply, { status: 413, type: 'invalid_request_error', code: 'body_too_large' });
        expect(reply.headers['connection']).toBe('close');
        outcomes.push('413');
      }
      expect(outcomes).toEqual(Array.from({ length: 20 }, () => '413'));
    }, 120_000);

    it('reaches the openai SDK as an APIError 413, 20 times out of 20', async () => {
      const client = openAIClient(gateway);
      // Just under 4x the limit (the most the gateway reads away): a size that fails on a plain close.
      const content = 'a'.repeat(4 * LIMIT - 4096);
      for (let attempt = 0; attempt < 20; attempt += 1) {
        const thrown = await rejectionOf(
          client.chat.completions.create({ model: 'openai/mock-model', messages: [{ role: 'user', content }] }),
        );
        expect(thrown).not.toBeInstanceOf(OpenAI.APIConnectionError);
        expectClientError(thrown, { status: 413, type: 'invalid_request_error', code: 'body_too_large' });
      }
    }, 120_000);
  });

  describe('errors of the HTTP parser answer the envelope', () => {
    it.each([
      ['a bad header name', 'GET /health HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n', 400, 'malformed_request'],
      ['a NUL byte in a header value', 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n', 400, 'malformed_request'],
      [
        'Content-Length with chunked encoding',
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        400,
        'malformed_request',
      ],
      ['headers over the size limit', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ])('%s', async (_name, text, status, code) => {
      const reply = await rawExchange(gateway.port, (socket) => socket.write(text));
      expectEnvelope(reply, { status, type: 'invalid_request_error', code });
      expect(reply.headers['connection']).toBe('close');
    });
  });

  describe('slow clients', () => {
    it('headers that do not arrive within HEADERS_TIMEOUT_SECONDS get 408 and the socket closes', async () => {
      const started = Date.now();
      const reply = await rawExchange(gateway.port, (socket) => socket.write('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: '));
      expectEnvelope(reply, { status: 408, type: 'invalid_request_error', code: 'request_timeout' });
      expect(Date.now() - started).toBeLessThan(10_000);
    }, 20_000);

    it('bodies trickled byte by byte get 408 within BODY_TIMEOUT_SECONDS, other requests unaffected', async () => {
      const started = Date.now();
      const slow = Array.from({ length: 10 }, () => trickle(gateway.port, '/v1/chat/completions'));
      // Meanwhile the gateway answers others at once.
      for (let index = 0; index < 5; index += 1) {
        const before = Date.now();
        const health = await rawRequest(`${gateway.url}/health`);
        expect(health.status).toBe(200);
        expect(Date.now() - before).toBeLessThan(1000);
        await sleep(150);
      }
      for (const reply of await Promise.all(slow)) {
        expectEnvelope(reply, { status: 408, type: 'invalid_request_error', code: 'request_timeout' });
      }
      expect(Date.now() - started).toBeLessThan(12_000);
    }, 30_000);

    it('a slow body on /v1/messages gets the 408 in the Anthropic dialect', async () => {
      const reply = await trickle(gateway.port, '/v1/messages');
      expect(reply.status).toBe(408);
      expect(JSON.parse(reply.text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    }, 30_000);

    it('does not cut an SSE answer that lasts longer than BODY_TIMEOUT_SECONDS', async () => {
      const started = Date.now();
      const stream = await openAIClient(gateway).chat.completions.create({
        model: 'openai/mock-model',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      let chunks = 0;
      let finish: string | null = null;
      for await (const chunk of stream) {
        chunks += 1;
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect(Date.now() - started).toBeGreaterThan(2500);
      expect(chunks).toBeGreaterThanOrEqual(12);
      expect(finish).toBe('stop');
    }, 30_000);
  });
});

type UploadReply = RawReply | { error: string };

/** A node http POST of `size` bytes with a Content-Length, written as the socket drains. */
function uploadWithNodeHttp(port: number, size: number): Promise<UploadReply> {
  return new Promise((resolve) => {
    const headers = { 'content-type': 'application/json', 'content-length': size, authorization: `Bearer ${MASTER_KEY}` };
    const request = httpRequest(
      { host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', headers, agent: false },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }));
        response.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const write = (): void => {
      while (sent < size) {
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', write);
      }
      request.end();
    };
    write();
  });
}

/** A POST whose body arrives one byte every 200 ms, until the gateway closes the connection. */
function trickle(port: number, path: string): Promise<RawReply> {
  return rawExchange(port, (socket) => {
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${MASTER_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
    );
    const timer = setInterval(() => socket.write('{'), 200);
    socket.once('close', () => clearInterval(timer));
  });
}

/** Writes raw bytes on a fresh connection and reads everything until the gateway closes it. */
function rawExchange(port: number, send: (socket: Socket) => void): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]);
      if (!Number.isInteger(status)) return reject(new Error(`no HTTP answer: ${JSON.stringify(text)}`));
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status, headers, text: body });
    });
    socket.once('connect', () => send(socket));
  });
}
