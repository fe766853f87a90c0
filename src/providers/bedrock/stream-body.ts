import type { Readable } from 'node:stream';
import { openFrameStream } from '../converted-stream.ts';
import { BedrockStreamConverter, type StreamOptions } from './convert-stream.ts';
import type { EventStreamDecoder } from './event-stream.ts';

/**
 * The upstream's binary event stream as OpenAI chat chunk SSE bytes, so the gateway's stream
 * relay (metering, usage chunk, provider stamp) works unchanged. The body is read up to its
 * first OpenAI frame before this resolves: a stream that opens with an exception
 * (throttlingException, typically) fails the attempt like an error status does, and can be
 * retried or failed over; a later exception breaks the stream, which the relay ends with an
 * error event.
 */
export async function openConvertedStream(upstream: Readable, options: StreamOptions, signal: AbortSignal): Promise<Readable> {
  // The event-stream codec (@smithy) is loaded on the first Bedrock stream, not at start-up.
  const { EventStreamDecoder: Decoder } = await import('./event-stream.ts');
  const frames = convertFrames(upstream, new Decoder(options.provider), new BedrockStreamConverter(options));
  return openFrameStream(upstream, frames, options.provider, signal);
}

async function* convertFrames(upstream: Readable, decoder: EventStreamDecoder, converter: BedrockStreamConverter): AsyncGenerator<Buffer> {
  for await (const chunk of upstream) {
    let text = '';
    try {
      for (const frame of decoder.push(chunk as Buffer)) text += converter.push([frame]);
    } catch (error) {
      // What arrived before the exception reaches the client first; the error then ends the stream.
      if (text !== '') yield Buffer.from(text);
      throw error;
    }
    if (text !== '') yield Buffer.from(text);
  }
  decoder.finish();
  const tail = converter.finish();
  if (tail !== '') yield Buffer.from(tail);
}
