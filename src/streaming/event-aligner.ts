/**
 * Splits a byte stream of SSE at event boundaries (a blank line: `\n\n` or `\n\r\n`), for a
 * relay that passes upstream bytes through untouched: what `push` returns ends with a whole
 * event, and the bytes of an unfinished event are held back until its blank line arrives.
 * A stream cut inside an event thus never hands the client half a frame (WHATWG SSE discards
 * it too). Linear: each chunk is searched once, backwards, for its last boundary.
 */
export class SseEventAligner {
  private held: Buffer[] = [];
  /** The last two bytes pushed so far (a boundary may straddle chunks). */
  private previous = [0, 0];

  push(chunk: Buffer): Buffer {
    const boundary = this.lastBoundary(chunk);
    if (chunk.length >= 2) this.previous = [chunk[chunk.length - 2] as number, chunk[chunk.length - 1] as number];
    else if (chunk.length === 1) this.previous = [this.previous[1] as number, chunk[0] as number];
    if (boundary === -1) {
      if (chunk.length > 0) this.held.push(chunk);
      return Buffer.alloc(0);
    }
    const complete = chunk.subarray(0, boundary + 1);
    const out = this.held.length === 0 ? complete : Buffer.concat([...this.held, complete]);
    this.held = boundary + 1 < chunk.length ? [chunk.subarray(boundary + 1)] : [];
    return out;
  }

  /** The index of the `\n` that ends the chunk's last blank line, or -1. */
  private lastBoundary(chunk: Buffer): number {
    const byteAt = (index: number): number =>
      index >= 0 ? (chunk[index] as number) : ((index === -1 ? this.previous[1] : this.previous[0]) as number);
    let newline = chunk.lastIndexOf(10);
    while (newline !== -1) {
      const before = byteAt(newline - 1);
      if (before === 10 || (before === 13 && byteAt(newline - 2) === 10)) return newline;
      newline = newline === 0 ? -1 : chunk.lastIndexOf(10, newline - 1);
    }
    return -1;
  }
}
