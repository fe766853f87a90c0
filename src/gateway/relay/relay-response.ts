import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import { parseJsonObject } from '../../core/json.ts';

/** How much of a JSON answer is kept to read its `usage` once relayed. */
export const usageCaptureLimit = 1024 * 1024;

export interface RelayedResponse {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Readable;
}

export interface RelayResult {
  /** `completed`, `client_closed` (the client left) or `upstream_error` (the body broke off). */
  ending: 'completed' | 'client_closed' | 'upstream_error';
  /** The status the usage record gets: 200, 499 or 502 (the relayed status when it completed). */
  status: number;
  /** The `usage` and `model` of a complete JSON answer, when it had them. */
  usage: UsageObject | null;
  model: string | null;
}

/**
 * Streams an upstream answer to the client as it arrives (audio, files, passthrough), with
 * backpressure, keeping a bounded copy of a plain JSON answer to read its `usage` at the end.
 * Resolves once the response has ended, however it ended; the upstream body is destroyed
 * when the client leaves.
 */
export async function relayResponse(raw: ServerResponse, response: RelayedResponse, signal: AbortSignal): Promise<RelayResult> {
  raw.writeHead(response.status, response.headers);
  const capture = capturable(response.headers) ? new BoundedCapture(usageCaptureLimit) : null;
  try {
    await (capture === null ? pipeline(response.body, raw) : pipeline(response.body, capture, raw));
  } catch {
    const ending = signal.aborted || raw.destroyed ? 'client_closed' : 'upstream_error';
    if (!raw.destroyed) raw.destroy();
    return { ending, status: ending === 'client_closed' ? 499 : 502, usage: null, model: null };
  }
  const summary = capture?.complete ? summaryOf(decoded(capture.bytes(), encodingOf(response.headers))) : null;
  return { ending: 'completed', status: response.status, usage: summary?.usage ?? null, model: summary?.model ?? null };
}

/** Content codings the gateway can undo on its copy (providers compress JSON for clients that accept it). */
const decoders: Readonly<Record<string, ((bytes: Buffer) => Buffer) | undefined>> = {
  identity: (bytes) => bytes,
  gzip: (bytes) => gunzipSync(bytes, { maxOutputLength: usageCaptureLimit }),
  'x-gzip': (bytes) => gunzipSync(bytes, { maxOutputLength: usageCaptureLimit }),
  deflate: (bytes) => inflateSync(bytes, { maxOutputLength: usageCaptureLimit }),
  br: (bytes) => brotliDecompressSync(bytes, { maxOutputLength: usageCaptureLimit }),
};

function encodingOf(headers: OutgoingHttpHeaders): string {
  return String(headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
}

/** Whether a response is JSON the gateway can read (in a coding it can undo, not a stream). */
function capturable(headers: OutgoingHttpHeaders): boolean {
  const type = String(headers['content-type'] ?? '').toLowerCase();
  return /^application\/([\w.+-]+\+)?json\b/.test(type) && decoders[encodingOf(headers)] !== undefined;
}

/** The captured copy as text, decompressed (bounded); '' when it cannot be decoded. */
function decoded(bytes: Buffer, encoding: string): string {
  try {
    return (decoders[encoding]?.(bytes) ?? Buffer.alloc(0)).toString('utf8');
  } catch {
    return '';
  }
}

/** The `usage` object and `model` of a JSON answer, if it is one. */
export function summaryOf(text: string): { usage: UsageObject | null; model: string | null } | null {
  const answer = parseJsonObject(text);
  if (answer === null) return null;
  const usage = answer['usage'];
  const model = answer['model'];
  return {
    usage: typeof usage === 'object' && usage !== null && !Array.isArray(usage) ? (usage as UsageObject) : null,
    model: typeof model === 'string' ? model : null,
  };
}

/** Passes bytes through unchanged, keeping a copy until `limit` bytes. */
class BoundedCapture extends Transform {
  private readonly limit: number;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private overflowed = false;

  constructor(limit: number) {
    super();
    this.limit = limit;
  }

  get complete(): boolean {
    return !this.overflowed;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (!this.overflowed) {
      this.size += chunk.length;
      if (this.size > this.limit) {
        this.overflowed = true;
        this.chunks.length = 0;
      } else {
        this.chunks.push(chunk);
      }
    }
    callback(null, chunk);
  }
}
