import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamErrorOf } from '../providers/upstream-body.ts';
import { UpstreamClient } from '../providers/upstream-client.ts';
import { UpstreamBody, type ChunkSink } from './upstream-body.ts';

describe('UpstreamClient.requestStream', () => {
  let server: Server;
  let base: string;
  let closedEarly = 0;
  const client = new UpstreamClient({ timeoutMs: 5_000, connectTimeoutMs: 1_000, connections: 4 });

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/error') {
        response.writeHead(429, { 'retry-after': '3', 'content-type': 'application/json' });
        response.end('{"error":{"message":"slow down"}}');
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: one\n\n');
      const timer = setTimeout(() => response.end('data: two\n\n'), request.url === '/slow' ? 5_000 : request.url === '/later' ? 300 : 20);
      response.on('close', () => {
        clearTimeout(timer);
        if (!response.writableFinished) closedEarly += 1;
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const open = (path: string, abort?: { aborted: boolean; onAbort(listener: () => void): () => void }) =>
    client.requestStream({ provider: 'mock', url: new URL(base + path), method: 'GET', headers: {}, ...(abort ? { abort } : {}) });

  it('reads the body as a Readable, in the order it arrived', async () => {
    const response = await open('/ok');
    expect(response.statusCode).toBe(200);
    let text = '';
    for await (const chunk of response.body) text += String(chunk);
    expect(text).toBe('data: one\n\ndata: two\n\n');
  });

  it('hands the body to a sink, with what arrived before it attached', async () => {
    const response = await open('/later');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(response.body.readableLength).toBeGreaterThan(0);
    const received: string[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      const sink: ChunkSink = { data: (chunk) => received.push(String(chunk)) > 0, end: resolve, error: reject };
      expect(response.body instanceof UpstreamBody && response.body.attach(sink)).toBe(true);
    });
    await ended;
    expect(received.join('')).toBe('data: one\n\ndata: two\n\n');
  });

  it('hands a body that ended before the sink attached over whole, then its end', async () => {
    const response = await open('/ok');
    const body = response.body as UpstreamBody;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(body.ended).toBe(true);
    const calls: string[] = [];
    const sink: ChunkSink = {
      data: (chunk) => calls.push(`data ${String(chunk)}`) > 0,
      end: () => calls.push('end'),
      error: () => calls.push('error'),
    };
    expect(body.attach(sink)).toBe(true);
    expect(calls).toEqual(['data data: one\n\ndata: two\n\n', 'end']);
  });

  it('aborts the upstream request when the abort source fires mid-body', async () => {
    let listener: () => void = () => undefined;
    const abort = { aborted: false, onAbort: (next: () => void) => ((listener = next), () => undefined) };
    const response = await open('/slow', abort);
    const failed = new Promise((resolve) => response.body.on('error', resolve));
    response.body.resume();
    const before = closedEarly;
    abort.aborted = true;
    listener();
    expect(await failed).toBeInstanceOf(Error);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closedEarly).toBe(before + 1);
  });

  it('leaves an error answer readable for the error mapper', async () => {
    const response = await open('/error');
    expect(response.statusCode).toBe(429);
    const error = await upstreamErrorOf(response, 'mock');
    expect(error).toMatchObject({ status: 429, provider: 'mock' });
    expect(String((error as Error).message)).toContain('slow down');
  });
});
