import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * An upload over BODY_SIZE_LIMIT is answered 413 before it has arrived. Closing the socket at once
 * (Node does so after a `Connection: close` answer) resets a client that is still sending, and the
 * client then sees EPIPE or ECONNRESET instead of the 413. So the rest of the upload is read and
 * discarded first, like nginx's lingering close, within bounds: at most `maxBytes` declared or read,
 * and `maxMs`; past either the socket is closed as before.
 */
export interface DiscardBounds {
  readonly maxBytes: number;
  readonly maxMs: number;
}

const discarding = new WeakSet<Socket>();

/** Whether the socket is reading away an upload already answered (no other answer may be written on it). */
export function isDiscardingBody(socket: Socket): boolean {
  return discarding.has(socket);
}

/** Call before the 413 is sent: the socket closes once the request is read (or a bound is reached). */
export function discardRestOfBody(request: IncomingMessage, bounds: DiscardBounds): void {
  const socket = request.socket;
  if (request.complete || socket.destroyed || discarding.has(socket)) return;
  const declared = Number(request.headers['content-length'] ?? 0);
  if (!(declared <= bounds.maxBytes)) return;
  discarding.add(socket);
  const closeSoon = socket.destroySoon.bind(socket);
  let answered = false;
  let read = false;
  const finish = (): void => {
    clearTimeout(timer);
    socket.destroySoon = closeSoon;
    closeSoon();
  };
  const timer = setTimeout(() => socket.destroy(), bounds.maxMs);
  socket.once('close', () => clearTimeout(timer));
  // Node closes a `Connection: close` socket with destroySoon() once the answer is written: wait for the body too.
  socket.destroySoon = () => {
    answered = true;
    if (read) finish();
    else countDiscarded(request, socket, bounds.maxBytes);
  };
  request.once('end', () => {
    read = true;
    clearTimeout(timer);
    if (answered) finish();
  });
}

/** Node resumes an answered request to drop its body (`_dump`, which removes data listeners first): count what it drops. */
function countDiscarded(request: IncomingMessage, socket: Socket, maxBytes: number): void {
  let received = 0;
  request.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > maxBytes) socket.destroy();
  });
}
