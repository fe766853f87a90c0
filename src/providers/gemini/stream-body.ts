import type { Readable } from 'node:stream';
import { openConvertedSse } from '../converted-stream.ts';
import { GeminiStreamConverter, type StreamOptions } from './convert-stream.ts';

/**
 * The upstream's `streamGenerateContent?alt=sse` body as OpenAI chat chunk SSE bytes (see
 * openConvertedSse: a stream opening with an `{"error": ...}` event fails the attempt).
 */
export function openConvertedStream(upstream: Readable, options: StreamOptions, signal: AbortSignal): Promise<Readable> {
  return openConvertedSse(upstream, new GeminiStreamConverter(options), options.provider, signal);
}
