import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { ClientAbort } from './client-abort.ts';

/** Enough of a ServerResponse: `close`, and whether the response had finished by then. */
function fakeResponse(): { raw: ServerResponse; close: (finished: boolean) => void } {
  const emitter = new EventEmitter() as EventEmitter & { writableFinished: boolean };
  emitter.writableFinished = false;
  return {
    raw: emitter as unknown as ServerResponse,
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
});
