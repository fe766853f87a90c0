import { Transform, type TransformCallback } from 'node:stream';
import { isJsonObject, parseJsonObject } from '../../core/json.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import { SseParser, type SseEvent } from '../../streaming/sse-parser.ts';

/**
 * Passes an SSE body through byte for byte while observing its events (STYLE habit 3): the
 * last `usage` object an event carried is kept, for streams relayed as they are (an image
 * stream's `image_generation.completed` and `image_edit.completed` events report it).
 */
export class SseUsageObserver extends Transform {
  usage: UsageObject | null = null;
  private readonly parser = new SseParser();

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.observe(this.parser.push(chunk));
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.observe(this.parser.finish());
    callback();
  }

  private observe(events: SseEvent[]): void {
    for (const event of events) {
      if (!event.data.includes('"usage"')) continue;
      const usage = parseJsonObject(event.data)?.['usage'];
      if (isJsonObject(usage)) this.usage = usage;
    }
  }
}
