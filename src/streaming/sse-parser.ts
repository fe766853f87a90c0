import { TextDecoder } from 'node:util';

export interface SseEvent {
  /** The `event:` field, or null for unnamed events. */
  event: string | null;
  /** The `data:` lines joined with `\n`. */
  data: string;
}

/**
 * The largest single event an upstream may send, in decoded characters (bytes for ASCII):
 * far above any real provider's frame, low enough that one frame cannot exhaust memory.
 */
export const maximumSseEventSize = 32 * 1024 * 1024;

/** An upstream event (or line) longer than the parser's bound; the relays map it to a 502. */
export class SseEventTooLargeError extends Error {
  readonly limit: number;

  constructor(limit: number) {
    super(`an upstream stream event is larger than ${limit} characters`);
    this.name = 'SseEventTooLargeError';
    this.limit = limit;
  }
}

export interface SseParserOptions {
  /** Bound on one event, `maximumSseEventSize` by default. */
  maxEventSize?: number;
}

/**
 * An incremental Server-Sent Events parser (WHATWG framing): bytes in any chunking, events
 * out. Lines end with `\n` or `\r\n`; comment lines (`:`) and unknown fields are ignored.
 * Work is linear in the input: each chunk is searched once, an unfinished line is kept as a
 * list of pieces joined only when its end arrives. An event over the bound throws
 * `SseEventTooLargeError`; an event cut off by the end of the stream is discarded.
 */
export class SseParser {
  /** Made at the first chunk that needs it (most streams never do). */
  private decoder: TextDecoder | null = null;
  /** Bytes of the stream have been decoded: a byte-order mark is dropped only before them. */
  private started = false;
  private readonly maxEventSize: number;
  /** The current unfinished line, in pieces. */
  private pending: string[] = [];
  private pendingSize = 0;
  /** Characters of complete lines of the current event. */
  private eventSize = 0;
  private dataLines: string[] = [];
  private eventName: string | null = null;
  private incomplete = false;
  /** The decoder holds no partial sequence and has seen the stream's first bytes. */
  private cleanCut = false;
  /** An event so far had more than one `data:` line (its data holds a `\n`). */
  multilineSeen = false;

  constructor(options: SseParserOptions = {}) {
    this.maxEventSize = options.maxEventSize ?? maximumSseEventSize;
  }

  push(chunk: Uint8Array): SseEvent[] {
    const text = this.decode(chunk);
    const events: SseEvent[] = [];
    let start = this.pending.length === 0 && this.eventSize === 0 && this.eventName === null ? this.takeFrames(text, events) : 0;
    let newline = text.indexOf('\n', start);
    while (newline !== -1) {
      let line = text.slice(start, newline);
      if (this.pending.length > 0) {
        this.pending.push(line);
        line = this.pending.join('');
        this.pending = [];
        this.pendingSize = 0;
      }
      this.takeLine(line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line, events);
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    if (start < text.length) {
      this.pending.push(start === 0 ? text : text.slice(start));
      this.pendingSize += text.length - start;
      this.checkSize(0);
    }
    return events;
  }

  /**
   * UTF-8 text of a chunk. The decoder keeps a sequence split between chunks and drops a
   * leading byte-order mark. A chunk that ends on an ASCII byte needs neither when it follows
   * a clean cut (the previous chunk ended on one) or starts the stream with anything but 0xEF
   * (a mark's first byte): plain `toString`. A decoder made later keeps a mark then.
   */
  private decode(chunk: Uint8Array): string {
    if (chunk.length === 0) return '';
    const last = chunk[chunk.length - 1] ?? 0;
    if (last < 0x80 && chunk instanceof Buffer && (this.cleanCut || (!this.started && chunk[0] !== 0xef))) {
      this.started = true;
      this.cleanCut = true;
      return chunk.toString('utf8');
    }
    this.decoder ??= new TextDecoder('utf-8', { ignoreBOM: this.started });
    this.started = true;
    this.cleanCut = last < 0x80;
    return this.decoder.decode(chunk, { stream: true });
  }

  /**
   * The common case on a clean event boundary: whole `data: <text>\n\n` events, one line
   * each, taken with one search per event. Returns where the general line parser goes on.
   */
  private takeFrames(text: string, events: SseEvent[]): number {
    let start = 0;
    while (text.startsWith('data: ', start)) {
      const newline = text.indexOf('\n', start + 6);
      if (newline === -1 || text.charCodeAt(newline + 1) !== 10 || text.charCodeAt(newline - 1) === 13) break;
      if (newline - start > this.maxEventSize) break; // the general path throws
      events.push({ event: null, data: text.slice(start + 6, newline) });
      start = newline + 2;
    }
    return start;
  }

  /**
   * Ends the stream. An event without its terminating blank line is discarded (WHATWG: the
   * stream was cut inside it); `truncated` then tells the caller so.
   */
  finish(): SseEvent[] {
    const rest = this.decoder === null ? '' : this.decoder.decode();
    this.incomplete = this.pendingSize > 0 || rest !== '' || this.dataLines.length > 0 || this.eventName !== null;
    this.pending = [];
    this.pendingSize = 0;
    this.dataLines = [];
    this.eventName = null;
    this.eventSize = 0;
    return [];
  }

  /** Whether `finish` discarded an event cut off by the end of the stream. */
  get truncated(): boolean {
    return this.incomplete;
  }

  private checkSize(line: number): void {
    if (this.eventSize + line + this.pendingSize > this.maxEventSize) throw new SseEventTooLargeError(this.maxEventSize);
  }

  private takeLine(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.dataLines.length > 1) this.multilineSeen = true;
      if (this.dataLines.length > 0) events.push({ event: this.eventName, data: this.dataLines.join('\n') });
      this.dataLines = [];
      this.eventName = null;
      this.eventSize = 0;
      return;
    }
    this.checkSize(line.length);
    this.eventSize += line.length + 1;
    if (line.charCodeAt(0) === 58) return; // ":" comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
    else if (field === 'event') this.eventName = value;
  }
}
