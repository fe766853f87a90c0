import type { Readable } from 'node:stream';
import { openConvertedSse } from '../converted-stream.ts';
import { AnthropicStreamConverter, type StreamOptions } from './convert-stream.ts';

/**
 * The upstream's Anthropic SSE body as OpenAI chat chunk SSE bytes (see openConvertedSse: a
 * stream opening with an `error` event, overloaded typically, fails the attempt).
 */
export function openConvertedStream(upstream: Readable, options: StreamOptions, signal: AbortSignal): Promise<Readable> {
  return openConvertedSse(upstream, new AnthropicStreamConverter(options), options.provider, signal);
}
