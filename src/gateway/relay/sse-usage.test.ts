import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { SseUsageObserver } from './sse-usage.ts';

describe('SseUsageObserver', () => {
  it('passes the bytes through unchanged and keeps the last usage, in any chunking', async () => {
    const body =
      'event: image_generation.partial_image\ndata: {"type":"image_generation.partial_image","b64_json":"AAAA"}\n\n' +
      'event: image_generation.completed\ndata: {"type":"image_generation.completed","usage":{"input_tokens":3,"output_tokens":4}}\n\n';
    const pieces = body.match(/[\s\S]{1,7}/g) ?? [];
    const observer = new SseUsageObserver();
    const relayed = await text(Readable.from(pieces.map((piece) => Buffer.from(piece))).pipe(observer));
    expect(relayed).toBe(body);
    expect(observer.usage).toEqual({ input_tokens: 3, output_tokens: 4 });
  });

  it('keeps null when no event carries a usage object', async () => {
    const observer = new SseUsageObserver();
    await text(Readable.from([Buffer.from('data: {"usage":null}\n\ndata: [DONE]\n\n')]).pipe(observer));
    expect(observer.usage).toBeNull();
  });
});
