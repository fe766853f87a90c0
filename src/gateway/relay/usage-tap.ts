import type { OutgoingHttpHeaders } from 'node:http';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { isJsonObject, parseJsonObject } from '../../core/json.ts';
import { meteredUsage, mergeUsage } from '../../dialects/anthropic-messages/usage.ts';
import { convertUsage } from '../../providers/gemini/convert-chat-response.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import type { StreamRenderer } from '../../streaming/renderer.ts';
import { SseParser, type SseEvent } from '../../streaming/sse-parser.ts';
import { TopLevelFields } from './json-fields.ts';
import { catalogue } from './openai-resources.ts';

/** The usage and model an answer reported (null when it did not, or could not be read). */
export interface AnswerUsage {
  usage: UsageObject | null;
  model: string | null;
}

/** The top-level fields of an answer that name what a catalogue route creates (`id`, `thread_id`, `file`, `fine_tuned_model`). */
const recordedFields = [
  ...new Set(catalogue.flatMap((route) => Object.keys(route.records ?? {}).map((field) => field.split('.')[0] as string))),
];

/** Decoded bytes of a compressed answer read for its usage at most (a small body may inflate a thousandfold). */
export const decodedScanLimit = 256 * 1024 * 1024;
/** The largest stream event read for usage (a Responses `response.completed` carries the whole answer). */
const maxUsageEventSize = 8 * 1024 * 1024;

type Decoder = Transform;
/** The content codings read (on a copy); `identity` needs no decoder. */
const decoders: Readonly<Record<string, (() => Decoder | null) | undefined>> = {
  identity: () => null,
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * Passes an upstream answer through byte for byte (a renderer of the relay engine,
 * streaming/relay.ts) while reading the usage it reports (STYLE habit 3), in bounded memory
 * whatever its size: a JSON answer by its top-level `usage` (or Gemini's `usageMetadata`)
 * alone (json-fields.ts), an event stream by the events that carry one (OpenAI's last chunk,
 * Anthropic's `message_start` and `message_delta`, Responses' `response.completed`, Gemini's
 * `usageMetadata`), decompressed on the side when the answer is. Nothing it reads can fail the
 * relay: an unreadable answer only has no usage. A broken answer has no room for an error
 * frame: the response is destroyed.
 */
export class UsageTap implements StreamRenderer {
  /** Bytes relayed, as sent. */
  relayed = 0;
  readonly done = false;
  readonly upstreamError = null;
  private readonly reader: AnswerReader;
  private decoder: Decoder | null;
  private decoded = 0;
  private decoding: Promise<void> = Promise.resolve();
  /** Past `decodedScanLimit`: the rest goes by unread. */
  private stopped = false;
  /** Work done once the answer is read and before its end reaches the client (recording what it created). */
  beforeEnd: ((tap: UsageTap) => Promise<void>) | null = null;

  constructor(kind: 'json' | 'sse' | 'none', encoding: string) {
    this.reader = kind === 'json' ? new JsonReader() : kind === 'sse' ? new SseReader() : unread;
    this.decoder = kind === 'none' ? null : (decoders[encoding]?.() ?? null);
    const decoder = this.decoder;
    if (decoder === null) return;
    decoder.on('data', (chunk: Buffer) => this.scan(chunk));
    // A body that does not decode has no usage; it is relayed all the same.
    decoder.on('error', () => (this.stopped = true));
    this.decoding = new Promise((resolve) => {
      decoder.once('end', resolve);
      decoder.once('close', resolve);
    });
  }

  /** The tap for an answer with these headers: it reads JSON and event streams (in a coding it can undo), and counts the bytes of any. */
  static for(headers: OutgoingHttpHeaders): UsageTap {
    const type = String(headers['content-type'] ?? '').toLowerCase();
    const encoding = String(headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase();
    if (decoders[encoding] === undefined) return new UsageTap('none', 'identity');
    if (/^application\/([\w.+-]+\+)?json\b/.test(type)) return new UsageTap('json', encoding);
    if (/^text\/event-stream\b/.test(type)) return new UsageTap('sse', encoding);
    return new UsageTap('none', 'identity');
  }

  /**
   * Hands each event of an event-stream answer to `listener` as it is read (a run's
   * `thread.run.completed`), under the same bounds; other answers have none.
   */
  observeEvents(listener: (event: SseEvent) => void): void {
    if (this.reader instanceof SseReader) this.reader.listener = listener;
  }

  /** What the answer reported; call once the relay has ended. */
  summary(): AnswerUsage {
    return this.stopped ? { usage: null, model: null } : this.reader.summary();
  }

  push(chunk: Buffer): Buffer {
    this.relayed += chunk.length;
    if (this.decoder === null) this.scan(chunk);
    else if (!this.decoder.destroyed) this.decoder.write(chunk);
    return chunk;
  }

  end(): string {
    return '';
  }

  /** The answer has ended: what the decoder still holds is read before the usage is. */
  async settle(): Promise<void> {
    this.decoder?.end();
    await this.decoding;
    this.reader.finish();
    if (this.beforeEnd !== null) await this.beforeEnd(this);
  }

  fail(): null {
    return null;
  }

  abandon(): void {
    this.decoder?.destroy();
  }

  usage(): UsageObject | null {
    return this.summary().usage;
  }

  /** A string at a dotted path of a JSON answer (`id`, `file.id`: a field a catalogue route records), or ''; call once the relay has ended. */
  answerField(path: string): string {
    return this.stopped ? '' : this.reader.field(path);
  }

  /** The id of what the answer created (top-level `id`, a Responses stream's `response.created`, a chat stream's chunks'), when it had one; call once the relay has ended. */
  responseId(): string | null {
    return this.stopped ? null : this.reader.responseId();
  }

  private scan(chunk: Buffer): void {
    if (this.stopped) return;
    this.decoded += chunk.length;
    if (this.decoded > decodedScanLimit) {
      this.stopped = true;
      this.decoder?.destroy();
      this.decoder = null;
      return;
    }
    this.reader.push(chunk);
  }
}

interface AnswerReader {
  push(chunk: Buffer): void;
  finish(): void;
  summary(): AnswerUsage;
  responseId(): string | null;
  field(path: string): string;
}

/** An answer that reports no usage (audio, a file): only its bytes are counted. */
const unread: AnswerReader = {
  push: () => undefined,
  finish: () => undefined,
  summary: () => ({ usage: null, model: null }),
  responseId: () => null,
  field: () => '',
};

class JsonReader implements AnswerReader {
  private readonly fields = new TopLevelFields(['usage', 'usageMetadata', 'model', 'modelVersion', 'id', ...recordedFields]);

  push(chunk: Buffer): void {
    this.fields.push(chunk);
  }

  finish(): void {}

  summary(): AnswerUsage {
    if (!this.fields.complete) return { usage: null, model: null };
    const value = (name: string): unknown => this.value(name);
    const model = value('model') ?? value('modelVersion');
    const gemini = value('usageMetadata');
    const usage = isJsonObject(gemini) ? convertUsage(gemini) : normalized(value('usage'));
    return { usage, model: typeof model === 'string' ? model : null };
  }

  responseId(): string | null {
    const id = this.fields.complete ? this.value('id') : undefined;
    return typeof id === 'string' && id !== '' ? id : null;
  }

  field(path: string): string {
    if (!this.fields.complete) return '';
    const [first, ...rest] = path.split('.');
    let value = this.value(first as string);
    for (const key of rest) value = isJsonObject(value) ? value[key] : undefined;
    return typeof value === 'string' ? value : '';
  }

  private value(name: string): unknown {
    const text = this.fields.values.get(name);
    return text === undefined ? undefined : parseJsonObject(`{"v":${text}}`)?.['v'];
  }
}

class SseReader implements AnswerReader {
  private readonly parser = new SseParser({ maxEventSize: maxUsageEventSize });
  private usage: Record<string, unknown> | null = null;
  private gemini: Record<string, unknown> | null = null;
  private model: string | null = null;
  private id: string | null = null;
  private broken = false;
  listener: ((event: SseEvent) => void) | null = null;

  push(chunk: Buffer): void {
    if (this.broken) return;
    try {
      this.observe(this.parser.push(chunk));
    } catch {
      // An event too large to read: the stream goes on, unread from here.
      this.broken = true;
    }
  }

  finish(): void {
    if (this.broken) return;
    try {
      this.observe(this.parser.finish());
    } catch {
      this.broken = true;
    }
  }

  summary(): AnswerUsage {
    const usage = this.gemini !== null ? convertUsage(this.gemini) : normalized(this.usage);
    return { usage, model: this.model };
  }

  responseId(): string | null {
    return this.id;
  }

  /** A stream creates nothing the catalogue records (a streamed createAndRun is not recorded, as on `/v1`). */
  field(): string {
    return '';
  }

  private observe(events: SseEvent[]): void {
    for (const event of events) {
      this.listener?.(event);
      if (this.id === null && event.data.includes('"response.created"')) this.id = createdIdOf(event.data);
      else if (this.id === null && event.data.includes('"chat.completion.chunk"')) this.id = chunkIdOf(event.data);
      if (!event.data.includes('"usage')) continue;
      const data = parseJsonObject(event.data);
      if (data === null) continue;
      const message = isJsonObject(data['message']) ? data['message'] : null;
      const response = isJsonObject(data['response']) ? data['response'] : null;
      // Counts are cumulative in every shape: a later report replaces the fields it names.
      for (const usage of [message?.['usage'], response?.['usage'], data['usage']]) this.usage = mergeUsage(this.usage, usage);
      if (isJsonObject(data['usageMetadata'])) this.gemini = data['usageMetadata'];
      const model = data['model'] ?? message?.['model'] ?? response?.['model'] ?? data['modelVersion'];
      if (this.model === null && typeof model === 'string') this.model = model;
    }
  }
}

/** The id of a chat completion chunk (every chunk of a stream carries the completion's). */
function chunkIdOf(data: string): string | null {
  const chunk = parseJsonObject(data);
  const id = chunk?.['object'] === 'chat.completion.chunk' ? chunk['id'] : undefined;
  return typeof id === 'string' && id !== '' ? id : null;
}

/** The response id of a Responses `response.created` event. */
function createdIdOf(data: string): string | null {
  const event = parseJsonObject(data);
  const response = event?.['type'] === 'response.created' && isJsonObject(event['response']) ? event['response'] : null;
  const id = response?.['id'];
  return typeof id === 'string' && id !== '' ? id : null;
}

/**
 * A reported usage in the shape metering reads (readTokenCounts): Anthropic's (cache reads
 * and writes apart from `input_tokens`) summed into the prompt, Responses'
 * `input_tokens_details` read as `prompt_tokens_details`; OpenAI's as it is.
 */
function normalized(usage: unknown): UsageObject | null {
  if (!isJsonObject(usage)) return null;
  if ('cache_read_input_tokens' in usage || 'cache_creation_input_tokens' in usage) return meteredUsage(usage);
  const details = usage['input_tokens_details'];
  if (isJsonObject(details) && !('prompt_tokens_details' in usage)) return { ...usage, prompt_tokens_details: details };
  return usage;
}
