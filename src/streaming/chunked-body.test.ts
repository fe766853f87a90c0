import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ChunkedBody } from './chunked-body.ts';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** Serves one streamed answer per request with `respond`; returns the port. */
async function serve(respond: (response: ServerResponse) => void): Promise<number> {
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    respond(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/**
 * The raw bytes of one answer: HTTP/1.1 until the chunked body's end, HTTP/1.0 until close.
 * With `readFrom`, reading starts only once it has settled.
 */
async function rawAnswer(port: number, version: '1.0' | '1.1', readFrom?: Promise<void>): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  socket.write(`GET / HTTP/${version}\r\nHost: test\r\n\r\n`);
  if (readFrom !== undefined) {
    socket.pause();
    void readFrom.then(() => socket.resume());
  }
  let text = '';
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (version === '1.1' && text.endsWith('\r\n0\r\n\r\n')) resolve();
    });
    socket.on('end', resolve);
    socket.on('error', reject);
  });
  socket.destroy();
  return text.slice(text.indexOf('\r\n\r\n') + 4);
}

function writeInTurns(response: ServerResponse, parts: string[]): void {
  const body = new ChunkedBody(response);
  const next = (index: number): void => {
    if (index === parts.length) {
      response.end('data: end\n\n');
      return;
    }
    body.write(parts[index] as string);
    setImmediate(() => next(index + 1));
  };
  next(0);
}

describe('ChunkedBody', () => {
  const parts = ['data: one\n\n', 'data: {"t":"sécond €"}\n\n', 'data: three\n\ndata: four\n\n'];

  it('frames chunks on the wire exactly as response.write does', async () => {
    const direct = await rawAnswer(await serve((response) => writeInTurns(response, parts)), '1.1');
    const plain = await rawAnswer(
      await serve((response) => {
        const next = (index: number): void => {
          if (index === parts.length) return void response.end('data: end\n\n');
          response.write(parts[index] as string);
          setImmediate(() => next(index + 1));
        };
        next(0);
      }),
      '1.1',
    );
    expect(direct).toBe(plain);
    const framed = [...parts, 'data: end\n\n'].map((part) => `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`).join('');
    expect(direct).toBe(`${framed}0\r\n\r\n`);
  });

  it('writes through the response when the answer is not chunked (HTTP/1.0)', async () => {
    const body = await rawAnswer(await serve((response) => writeInTurns(response, parts)), '1.0');
    expect(body).toBe(`${parts.join('')}data: end\n\n`);
  });

  it('joins what one callback writes into one chunk, and a last write takes what is queued', async () => {
    const port = await serve((response) => {
      const body = new ChunkedBody(response);
      body.write('data: head\n\n');
      setImmediate(() => {
        body.write('data: a\n\n');
        body.write('data: b\n\n');
        setImmediate(() => {
          body.write('data: c\n\n');
          response.end(`${body.take()}data: end\n\n`);
        });
      });
    });
    const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    expect(await rawAnswer(port, '1.1')).toBe(
      `${chunk('data: head\n\n')}${chunk('data: a\n\ndata: b\n\n')}${chunk('data: c\n\ndata: end\n\n')}0\r\n\r\n`,
    );
  });

  it('reports a full socket after the write that filled it, and calls back once it has drained', async () => {
    const big = `data: ${'x'.repeat(1024 * 1024)}\n\n`;
    let writes = 0;
    let drained = false;
    let full: () => void = () => undefined;
    const filled = new Promise<void>((resolve) => (full = resolve));
    const port = await serve((response) => {
      const body = new ChunkedBody(response);
      body.write('data: head\n\n');
      // The kernel takes megabytes on loopback before the socket reports itself full.
      const next = (): void => {
        writes += 1;
        if (body.write(big) && writes < 256) return void setImmediate(next);
        full();
        body.onDrain(() => {
          drained = true;
          response.end();
        });
      };
      setImmediate(next);
    });
    const text = await rawAnswer(port, '1.1', filled);
    expect(writes).toBeLessThan(256);
    expect(drained).toBe(true);
    // "c\r\n" head "\r\n", then each big write as "100008\r\n" big "\r\n", then the end.
    expect(text.length).toBe(17 + writes * (Buffer.byteLength(big) + 10) + 5);
  });
});
