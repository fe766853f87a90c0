import { EventEmitter } from 'node:events';
import { createServer, get, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { ClientAbort } from './client-abort.ts';

/** Enough of a ServerResponse: `end` (what it wrote), `close`, and whether the response had finished by then. */
function fakeResponse(): { raw: ServerResponse; written: unknown[]; close: (finished: boolean) => void } {
  const written: unknown[] = [];
  const emitter = new EventEmitter() as EventEmitter & { writableFinished: boolean; end(chunk?: unknown): unknown };
  emitter.writableFinished = false;
  emitter.end = function end(chunk?: unknown) {
    written.push(chunk);
    return this;
  };
  return {
    raw: emitter as unknown as ServerResponse,
    written,
    close: (finished) => {
      emitter.writableFinished = finished;
      emitter.emit('close');
    },
  };
}

describe('ClientAbort', () => {
  it('calls each subscriber once when the client leaves before the response finished', () => {
    const { raw, close } = fakeResponse();
    const abort = new ClientAbort(raw);
    const first = vi.fn();
    const second = vi.fn();
    abort.onAbort(first);
    const unsubscribe = abort.onAbort(second);
    unsubscribe();
    expect(abort.aborted).toBe(false);
    close(false);
    expect(abort.aborted).toBe(true);
    expect(first).toHaveBeenCalledTimes(1);
    expect(second).not.toHaveBeenCalled();
  });

  it('is not aborted by the close that follows a finished response', () => {
    const { raw, close } = fakeResponse();
    const abort = new ClientAbort(raw);
    const listener = vi.fn();
    abort.onAbort(listener);
    const signal = abort.signal;
    close(true);
    expect(abort.aborted).toBe(false);
    expect(signal.aborted).toBe(false);
    expect(listener).not.toHaveBeenCalled();
  });

  it('makes its AbortSignal on first read: aborted with the client, or already aborted if made afterwards', () => {
    const early = fakeResponse();
    const before = new ClientAbort(early.raw);
    const signal = before.signal;
    expect(before.signal).toBe(signal);
    early.close(false);
    expect(signal.aborted).toBe(true);

    const late = fakeResponse();
    const after = new ClientAbort(late.raw);
    late.close(false);
    expect(after.signal.aborted).toBe(true);
    const listener = vi.fn();
    after.onAbort(listener);
    expect(listener).not.toHaveBeenCalled();
  });

  it('runs the close listener when the response closes, or at once if it already has', () => {
    const open = fakeResponse();
    const whileOpen = vi.fn();
    new ClientAbort(open.raw).whenClosed(whileOpen);
    expect(whileOpen).not.toHaveBeenCalled();
    open.close(true);
    expect(whileOpen).toHaveBeenCalledTimes(1);

    const gone = fakeResponse();
    const abort = new ClientAbort(gone.raw);
    gone.close(false);
    const afterClose = vi.fn();
    abort.whenClosed(afterClose);
    expect(afterClose).toHaveBeenCalledTimes(1);
  });

  it('runs the close listener once, when the answer is about to end (ending), not again on close; the response is not patched', () => {
    const { raw, written, close } = fakeResponse();
    const end = raw.end;
    const before: unknown[][] = [];
    const listener = vi.fn(() => before.push([...written]));
    const abort = new ClientAbort(raw);
    abort.whenClosed(listener);
    expect(raw.end).toBe(end);
    abort.ending();
    expect(raw.end('last bytes')).toBe(raw);
    abort.ending();
    expect(listener).toHaveBeenCalledTimes(1);
    expect(before).toEqual([[]]);
    expect(written).toEqual(['last bytes']);
    close(true);
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('runs the close listener once when the client leaves, and not again if the response is ended after', () => {
    const { raw, close } = fakeResponse();
    const listener = vi.fn();
    new ClientAbort(raw).whenClosed(listener);
    close(false);
    raw.end();
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('over node:http, the listener runs before the response has ended (ending, then end): a client that read the answer finds it done', async () => {
    const seen: Array<{ ended: boolean }> = [];
    const server = createServer((_request, response) => {
      const abort = new ClientAbort(response);
      abort.whenClosed(() => seen.push({ ended: response.writableEnded }));
      response.setHeader('content-type', 'text/plain');
      abort.ending();
      response.end('answer');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetchText(`http://127.0.0.1:${port}/`);
      expect(answer).toBe('answer');
      expect(seen).toEqual([{ ended: false }]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/** A GET with node:http (no keep-alive pool left behind); resolves with the body. */
function fetchText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve(text));
    }).on('error', reject);
  });
}
