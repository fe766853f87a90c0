export interface SseEvent {
  /** The `event:` field, or null for unnamed events. */
  event: string | null;
  /** The `data:` lines joined with `\n`. */
  data: string;
}

/**
 * An incremental Server-Sent Events parser (WHATWG framing): bytes in any chunking, events
 * out. Lines end with `\n` or `\r\n`; comment lines (`:`) and unknown fields are ignored.
 */
export class SseParser {
  private readonly decoder = new TextDecoder();
  private buffer = '';
  private dataLines: string[] = [];
  private eventName: string | null = null;

  push(chunk: Uint8Array): SseEvent[] {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    const events: SseEvent[] = [];
    let start = 0;
    let newline = this.buffer.indexOf('\n', start);
    while (newline !== -1) {
      const end = newline > start && this.buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      this.takeLine(this.buffer.slice(start, end), events);
      start = newline + 1;
      newline = this.buffer.indexOf('\n', start);
    }
    this.buffer = start === 0 ? this.buffer : this.buffer.slice(start);
    return events;
  }

  /** Ends the stream: a final event without its blank line is still delivered. */
  finish(): SseEvent[] {
    const events: SseEvent[] = [];
    this.buffer += this.decoder.decode();
    if (this.buffer !== '') this.takeLine(this.buffer, events);
    this.buffer = '';
    this.takeLine('', events);
    return events;
  }

  private takeLine(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.dataLines.length > 0) events.push({ event: this.eventName, data: this.dataLines.join('\n') });
      this.dataLines = [];
      this.eventName = null;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ":" comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
    else if (field === 'event') this.eventName = value;
  }
}
