/**
 * Reads chosen top-level fields of a JSON object as its bytes go by, in any chunking, without
 * keeping the document: one pass over each byte, and only the wanted values are copied (each
 * up to `maxValueBytes`; a longer one is dropped). An answer of any size (a 2 GB embeddings
 * list) costs its length in time and the wanted values in memory.
 */
export class TopLevelFields {
  private readonly wanted: ReadonlySet<string>;
  private readonly maxValueBytes: number;
  /** The values read, as JSON text (the last occurrence of a repeated key). */
  readonly values = new Map<string, string>();
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Where the top-level object is: before it, expecting a key, a colon, a value, after a value, or done (or not an object). */
  private phase: 'start' | 'key' | 'colon' | 'value' | 'after' | 'done' | 'invalid' = 'start';
  /** The bytes of the top-level key being read, null when not reading one (or it is too long to be wanted). */
  private key: number[] | null = null;
  private keyName = '';
  /** The field whose value is being copied, its pieces and size. */
  private capturing: string | null = null;
  private pieces: Buffer[] = [];
  private size = 0;
  /** Where the value being copied starts in the current chunk. */
  private from = 0;

  constructor(wanted: readonly string[], maxValueBytes = 64 * 1024) {
    this.wanted = new Set(wanted);
    this.maxValueBytes = maxValueBytes;
  }

  /** Whether the whole top-level object has been read. */
  get complete(): boolean {
    return this.phase === 'done';
  }

  push(chunk: Buffer): void {
    if (this.phase === 'done' || this.phase === 'invalid') return;
    this.from = 0;
    // The next quote and backslash at or after the cursor, found once each (positions only grow: linear).
    let quote = -1;
    let slash = -1;
    for (let index = 0; index < chunk.length; index += 1) {
      if (this.inString && !this.escaped && this.key === null) {
        // Inside a string value: skip to its next quote or backslash at once (base64 images, long texts).
        if (quote < index && quote !== chunk.length) quote = found(chunk.indexOf(0x22, index), chunk.length);
        if (slash < index && slash !== chunk.length) slash = found(chunk.indexOf(0x5c, index), chunk.length);
        index = Math.min(quote, slash);
        if (index === chunk.length) break;
      }
      const byte = chunk[index] as number;
      if (this.inString) this.stringByte(byte);
      else if (!this.structural(byte, chunk, index)) return;
    }
    if (this.capturing !== null) this.keep(chunk.subarray(this.from));
  }

  private stringByte(byte: number): void {
    if (this.escaped) this.escaped = false;
    else if (byte === 0x5c) this.escaped = true;
    else if (byte === 0x22) {
      this.inString = false;
      if (this.key !== null) this.endKey();
      return;
    }
    if (this.key !== null) this.keyByte(byte);
  }

  /** One byte outside strings; false once the object has ended (or is not one). */
  private structural(byte: number, chunk: Buffer, index: number): boolean {
    switch (byte) {
      case 0x20:
      case 0x09:
      case 0x0a:
      case 0x0d:
        return true;
      case 0x22: // "
        if (this.depth === 0) return this.invalid();
        this.inString = true;
        if (this.depth === 1 && this.phase === 'key') this.key = [];
        else this.valueStarted();
        return true;
      case 0x7b: // {
      case 0x5b: // [
        if (this.depth === 0 && (this.phase !== 'start' || byte !== 0x7b)) return this.invalid();
        if (this.depth === 0) this.phase = 'key';
        else this.valueStarted();
        this.depth += 1;
        return true;
      case 0x7d: // }
      case 0x5d: // ]
        this.depth -= 1;
        if (this.depth > 0) return true;
        if (this.capturing !== null) this.endValue(chunk, index);
        this.phase = 'done';
        return false;
      case 0x3a: // :
        if (this.depth === 1 && this.phase === 'colon') {
          this.phase = 'value';
          if (this.wanted.has(this.keyName)) this.startValue(this.keyName);
          this.from = index + 1;
        }
        return true;
      case 0x2c: // ,
        if (this.depth === 1) {
          if (this.capturing !== null) this.endValue(chunk, index);
          this.phase = 'key';
        }
        return true;
      default:
        if (this.depth === 0) return this.invalid();
        this.valueStarted();
        return true;
    }
  }

  private invalid(): false {
    this.phase = 'invalid';
    return false;
  }

  private keyByte(byte: number): void {
    const key = this.key as number[];
    if (key.length < 64) key.push(byte);
    else this.key = null;
  }

  private endKey(): void {
    this.keyName = this.key === null ? '' : Buffer.from(this.key).toString('utf8');
    this.key = null;
    this.phase = 'colon';
  }

  private valueStarted(): void {
    if (this.depth === 1 && this.phase === 'value') this.phase = 'after';
  }

  private startValue(name: string): void {
    this.capturing = name;
    this.pieces = [];
    this.size = 0;
  }

  private keep(piece: Buffer): void {
    this.size += piece.length;
    if (this.size > this.maxValueBytes) {
      this.capturing = null;
      this.pieces = [];
      return;
    }
    // A copy: the chunk belongs to the stream and may be reused once passed on.
    this.pieces.push(Buffer.from(piece));
  }

  private endValue(chunk: Buffer, to: number): void {
    const name = this.capturing as string;
    this.keep(chunk.subarray(this.from, to));
    if (this.capturing !== null) this.values.set(name, Buffer.concat(this.pieces).toString('utf8').trim());
    this.capturing = null;
    this.pieces = [];
  }
}

/** An `indexOf` result, the end when nothing was found. */
const found = (position: number, end: number): number => (position === -1 ? end : position);
