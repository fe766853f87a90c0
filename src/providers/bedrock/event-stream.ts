import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { providerError } from '../../errors/gateway-error.ts';

/** One decoded frame of AWS's event stream: its string headers and its payload as text. */
export interface StreamFrame {
  headers: Readonly<Record<string, string>>;
  payload: string;
}

/** Bound on one frame (AWS frames are at most 16 MiB). */
export const maximumFrameBytes = 16 * 1024 * 1024;
const preludeBytes = 12;

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/**
 * Splits AWS's binary event stream (`application/vnd.amazon.eventstream`: a 4-byte total
 * length, header length, prelude CRC, headers, payload, message CRC) into frames, whatever
 * the chunking of the bytes; the codec checks both CRCs.
 */
export class EventStreamDecoder {
  private readonly provider: string;
  private pending: Buffer = Buffer.alloc(0);

  constructor(provider: string) {
    this.provider = provider;
  }

  push(chunk: Buffer): StreamFrame[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: StreamFrame[] = [];
    while (this.pending.length >= 4) {
      const total = this.pending.readUInt32BE(0);
      if (total < preludeBytes + 4 || total > maximumFrameBytes) throw this.broken(`a frame of ${total} bytes`);
      if (this.pending.length < total) break;
      frames.push(this.decode(this.pending.subarray(0, total)));
      this.pending = this.pending.subarray(total);
    }
    return frames;
  }

  /** Bytes left over when the body ends are a cut-off frame. */
  finish(): void {
    if (this.pending.length > 0) throw this.broken('a cut-off frame at its end', 'upstream_stream_incomplete');
  }

  private decode(bytes: Buffer): StreamFrame {
    let message: Message;
    try {
      message = codec.decode(bytes);
    } catch {
      throw this.broken('a frame that does not decode (checksum)');
    }
    const headers: Record<string, string> = {};
    for (const [name, header] of Object.entries(message.headers)) if (header.type === 'string') headers[name] = header.value;
    return { headers, payload: toUtf8(message.body) };
  }

  private broken(what: string, code: 'invalid_upstream_response' | 'upstream_stream_incomplete' = 'invalid_upstream_response'): Error {
    return providerError(`upstream ${this.provider} sent an event stream with ${what}`, { provider: this.provider, code });
  }
}

/** Encodes one frame (tests and mocks speak the same wire format with it). */
export function encodeFrame(headers: Readonly<Record<string, string>>, payload: string): Buffer {
  const encoded: Message['headers'] = {};
  for (const [name, value] of Object.entries(headers)) encoded[name] = { type: 'string', value };
  return Buffer.from(codec.encode({ headers: encoded, body: fromUtf8(payload) }));
}
