import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.ts';
import { readBody, textOf } from './upstream-body.ts';
import { maximumErrorBodyBytes, UpstreamClient } from './upstream-client.ts';

describe('UpstreamClient.requestBuffered', () => {
  let server: Server;
  let base: string;
  const client = new UpstreamClient({ timeoutMs: 5_000, connectTimeoutMs: 1_000, connections: 4, maxResponseBytes: 1024 * 1024 });
  let hung = 0;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/chunks') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"a":');
        setTimeout(() => response.end('"ü ✓"}'), 10);
      } else if (request.url === '/broken-error') {
        response.writeHead(429, { 'retry-after': '7', 'content-length': '1000' });
        response.write('{"error":{"message":"slow');
        setTimeout(() => response.destroy(), 10);
      } else if (request.url === '/endless-error') {
        response.writeHead(500);
        response.write('x'.repeat(2 * maximumErrorBodyBytes)); // and never ends
      } else if (request.url === '/endless-json' || request.url === '/declared-json') {
        // A JSON answer past the client's bound: announced by its length, or just sent on and on.
        const headers = request.url === '/declared-json' ? { 'content-length': String(64 * 1024 * 1024) } : {};
        response.writeHead(200, { 'content-type': 'application/json', ...headers });
        const block = Buffer.alloc(64 * 1024, 'a');
        const pump = (): void => {
          while (!response.destroyed && response.write(block));
          if (!response.destroyed) response.once('drain', pump);
        };
        pump();
      } else if (request.url === '/big-error') {
        response.writeHead(500, { 'retry-after': '7' });
        response.end('x'.repeat(4 * maximumErrorBodyBytes));
      } else {
        hung += 1; // never answers
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const call = (path: string, extra: object = {}) =>
    client.requestBuffered({ provider: 'mock', url: new URL(base + path), method: 'GET', headers: {}, ...extra });

  it('joins a body that arrives in several chunks, with status and headers', async () => {
    const answer = await call('/chunks');
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual({ a: 'ü ✓' });
  });

  it('keeps only the first 64 KiB (about) of an error body', async () => {
    const answer = await call('/big-error');
    expect(answer.statusCode).toBe(500);
    expect(answer.headers['retry-after']).toBe('7');
    expect(answer.body.length).toBeGreaterThanOrEqual(maximumErrorBodyBytes);
    expect(answer.body.length).toBeLessThan(2 * maximumErrorBodyBytes);
  });

  it('aborts a request in flight when its abort source fires, and one that was aborted before it started', async () => {
    const listeners: (() => void)[] = [];
    let aborted = false;
    const abort = {
      get aborted() {
        return aborted;
      },
      onAbort(listener: () => void) {
        listeners.push(listener);
        return () => listeners.splice(listeners.indexOf(listener), 1);
      },
    };
    const pending = call('/hang', { abort });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(hung).toBe(1);
    aborted = true;
    for (const listener of [...listeners]) listener();
    await expect(pending).rejects.toThrow(/abort/i);
    expect(listeners).toHaveLength(0);

    const signal = AbortSignal.abort();
    await expect(call('/hang', { signal })).rejects.toThrow(/abort/i);
  });

  it('maps a connection failure to upstream_unreachable', async () => {
    const closed = new UpstreamClient({ timeoutMs: 1_000, connectTimeoutMs: 500, connections: 1 });
    const error = await closed
      .requestBuffered({ provider: 'mock', url: new URL('http://127.0.0.1:9/x'), method: 'GET', headers: {} })
      .catch((caught: unknown) => caught);
    await closed.close();
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'upstream_unreachable', status: 502 });
  });

  it('reports an error answer whose body breaks by its status, with what arrived', async () => {
    const answer = await call('/broken-error');
    expect(answer.statusCode).toBe(429);
    expect(answer.headers['retry-after']).toBe('7');
    expect(answer.body.toString()).toBe('{"error":{"message":"slow');
  });

  it('answers an error whose body never ends once it has 64 KiB of it', async () => {
    const started = Date.now();
    const answer = await call('/endless-error');
    expect(answer.statusCode).toBe(500);
    expect(answer.body.length).toBeGreaterThanOrEqual(maximumErrorBodyBytes);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('fails a successful answer past maxResponseBytes with a 502 and stops reading it', async () => {
    for (const path of ['/endless-json', '/declared-json']) {
      const error = await call(path).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ code: 'upstream_response_too_large', status: 502, provider: 'mock' });
    }
    const response = await client.request({ provider: 'mock', url: new URL(`${base}/endless-json`), method: 'GET', headers: {} });
    const error = await readBody(response, 'mock', new AbortController().signal).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'upstream_response_too_large', status: 502 });
    expect(response.body.destroyed).toBe(true);
  });

  it('reads a body as UTF-8 without a leading byte-order mark', () => {
    expect(textOf(Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{"a":"ü"}')]))).toBe('{"a":"ü"}');
    expect(textOf(Buffer.from('{"a":1}'))).toBe('{"a":1}');
    expect(textOf(Buffer.alloc(0))).toBe('');
  });
});
