import { renderEnvelope } from '../errors/envelope.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { chunkKeys, finishKey, transformChunk, type ChunkOptions, type UsageObject } from './chat-chunk.ts';
import { Capture, parseChunk, type StreamRenderer } from './renderer.ts';
import { SseParser, type SseEvent } from './sse-parser.ts';
import { ChatStreamEnd, incompleteStream } from './stream-end.ts';

export interface ChatRenderOptions extends ChunkOptions {
  /** Keep a copy of the output up to this many characters (for the response cache). */
  captureLimit?: number;
}

const doneFrame = 'data: [DONE]\n\n';

/**
 * An OpenAI chat stream as the client gets it: SSE parsed once, each chunk stamped with the
 * provider, the usage chunk hidden unless the client asked for it (chat-chunk.ts). A stream
 * that ends before its final chunk (no `[DONE]`, no finish reason, a cut-off frame) ends with
 * an error frame (the envelope under `error`, which SDKs raise), never with a synthetic `[DONE]`.
 */
export class ChatRenderer implements StreamRenderer {
  private readonly parser = new SseParser();
  private readonly streamEnd = new ChatStreamEnd();
  private readonly options: ChatRenderOptions;
  private readonly capture: Capture;
  private lastUsage: UsageObject | null = null;
  /** What `end` rendered of a stream that ended incomplete, sent before its error frame. */
  private held = '';
  done = false;
  readonly upstreamError = null;
  /** Set by `whenCompleted` only: a stream without it has no settling step. */
  settle?: () => Promise<void>;
  /** The chunks' `id`, read from the first chunk that has one, while `whenCompleted` asks for it. */
  private chunkId: string | null = null;
  private wantsId = false;

  constructor(options: ChatRenderOptions) {
    this.options = options;
    this.capture = new Capture(options.captureLimit);
  }

  push(chunk: Buffer): string {
    return this.render(this.parser.push(chunk));
  }

  end(): string {
    if (this.done) return '';
    const tail = this.render(this.parser.finish());
    if (!this.streamEnd.complete(this.parser.truncated)) {
      this.held = tail;
      throw incompleteStream(this.options.provider);
    }
    this.capture.add(doneFrame);
    return tail + doneFrame;
  }

  /**
   * `completed` runs with the chunks' `id` once the stream has ended well (its final chunk and
   * `[DONE]`) and before its last bytes reach the client; never for a broken or abandoned one.
   */
  whenCompleted(completed: (id: string) => Promise<void>): void {
    this.wantsId = true;
    this.settle = async () => {
      if (this.chunkId !== null) await completed(this.chunkId);
    };
  }

  fail(error: GatewayError): string {
    const held = this.held;
    this.held = '';
    return `${held}data: ${JSON.stringify(renderEnvelope(error))}\n\n`;
  }

  usage(): UsageObject | null {
    return this.lastUsage;
  }

  captured(): string | null {
    return this.capture.text;
  }

  private render(events: SseEvent[]): string {
    let text = '';
    for (const event of events) {
      if (this.done) break;
      text += this.renderEvent(event.data);
    }
    this.capture.add(text);
    return text;
  }

  private readId(data: string): void {
    const id = parseChunk(data)?.['id'];
    if (typeof id === 'string' && id !== '') this.chunkId = id;
  }

  private renderEvent(data: string): string {
    if (data === '[DONE]') {
      this.streamEnd.observeSearched(data, false);
      this.done = true;
      return doneFrame;
    }
    if (this.wantsId && this.chunkId === null) this.readId(data);
    const keys = chunkKeys(data); // one search for usage, provider and finish reason
    this.streamEnd.observeSearched(data, (keys & finishKey) !== 0);
    const outcome = transformChunk(data, this.options, keys);
    if (outcome.usage !== null) this.lastUsage = outcome.usage;
    if (outcome.payload === null) return '';
    // A payload that spanned several `data:` lines goes out the same way (one field per line).
    // The check is on the received text (a slice, searched in place), not on the built one, and
    // only once the stream has had such an event (one-line events are the rule).
    if (this.parser.multilineSeen && data.includes('\n')) return `data: ${outcome.payload.replaceAll('\n', '\ndata: ')}\n\n`;
    return `data: ${outcome.payload}\n\n`;
  }
}
