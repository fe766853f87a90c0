import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';

/**
 * The fields of Node's OutgoingMessage (lib/_http_outgoing.js) that tell whether the response's
 * body may go straight to its socket. Read only; absent fields make every write take
 * `response.write`.
 */
interface OutgoingState {
  readonly chunkedEncoding?: boolean;
  /** The head has been handed to the socket (with the first body write). */
  readonly _headerSent?: boolean;
  /** Output held while the socket is not yet this response's (pipelined requests). */
  readonly outputData?: readonly unknown[];
}

interface HttpSocket extends Socket {
  /** The response the server has given the socket to. */
  readonly _httpMessage?: unknown;
}

/**
 * The body of a streamed HTTP/1.1 response (ADR 0024). Text written during one callback (the
 * frames of one upstream read: undici hands over each chunked-encoding chunk of the upstream
 * separately) goes out in one socket write once that callback is done, in a microtask, so a
 * read is one write whatever it carries, and no token waits for a later turn. Once the head
 * has gone out and the socket is this response's alone, that write is the chunk framed as
 * `response.write` frames it (`<size hex>\r\n<text>\r\n`) and sent with one `socket.write`:
 * the same body bytes, no cork and uncork in a next tick. Otherwise (the first write, which
 * carries the head; a socket not yet assigned; output buffered in the response; not chunked)
 * it is `response.write`. A last write that ends the response takes what is pending (`take`).
 */
export class ChunkedBody {
  readonly response: ServerResponse;
  /** Text written in the current callback, not yet on the socket. */
  private pending = '';
  /** What the last write went to (the socket or the response): its 'drain' ends a full socket. */
  private target: Writable | null = null;
  /** Where `onDrain` put its listener. */
  private waiting: Writable | null = null;
  private readonly flush = (): void => {
    const text = this.pending;
    if (text === '') return;
    this.pending = '';
    const socket = this.directSocket();
    if (socket === null) {
      this.target = this.response;
      this.response.write(text);
    } else {
      this.target = socket;
      socket.write(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`);
    }
  };

  constructor(response: ServerResponse) {
    this.response = response;
  }

  /** Queues `text` (not empty) for this callback's write; false while the client's socket is full (wait for `onDrain`). */
  write(text: string): boolean {
    if (this.pending === '') queueMicrotask(this.flush);
    this.pending += text;
    return this.target === null || !this.target.writableNeedDrain;
  }

  /** What is queued and not yet written, taken out (for the write that ends the response). */
  take(): string {
    const text = this.pending;
    this.pending = '';
    return text;
  }

  /** Calls `listener` once when the full socket has drained. */
  onDrain(listener: () => void): void {
    this.waiting = this.target ?? this.response;
    this.waiting.once('drain', listener);
  }

  offDrain(listener: () => void): void {
    this.waiting?.off('drain', listener);
    this.waiting = null;
  }

  private directSocket(): HttpSocket | null {
    const response = this.response;
    const socket = response.socket as HttpSocket | null;
    if (socket === null || socket._httpMessage !== response || !socket.writable) return null;
    const state = response as OutgoingState;
    if (state._headerSent !== true || state.chunkedEncoding !== true || state.outputData?.length !== 0) return null;
    if (response.writableEnded || response.writableCorked !== 0) return null;
    return socket;
  }
}
