import { Readable } from 'node:stream';
import { SseParser, type SseEvent } from '../streaming/sse-parser.ts';
import { mapNetworkError } from '../streaming/network-error.ts';

/** Turns an upstream's SSE events into OpenAI chat chunk frames; `finish` is called at the body's end. */
export interface SseFrameConverter {
  push(events: readonly SseEvent[]): string;
  finish(): string;
}

/**
 * An upstream SSE body in a provider's own format as OpenAI chat chunk SSE bytes, so the
 * gateway's stream relay (metering, usage chunk, provider stamp) works unchanged. The body is
 * read up to its first frame before this resolves: an upstream that opens the stream with an
 * error event (overloaded, typically) then fails the attempt like an error status does, and
 * can be retried or failed over, instead of breaking a stream the client has already started.
 * A later failure breaks the stream, which the relay ends with an error event.
 */
export async function openConvertedSse(
  upstream: Readable,
  converter: SseFrameConverter,
  provider: string,
  signal: AbortSignal,
): Promise<Readable> {
  return openFrameStream(upstream, convertFrames(upstream, converter), provider, signal);
}

/**
 * `frames` (OpenAI chat chunk SSE bytes converted from `upstream`) as a Readable, after its
 * first frame is read: a failure before then is mapped like a network error and fails the
 * attempt; a later one destroys the stream. Destroying the stream closes `upstream`.
 */
export async function openFrameStream(
  upstream: Readable,
  frames: AsyncGenerator<Buffer>,
  provider: string,
  signal: AbortSignal,
): Promise<Readable> {
  let first: IteratorResult<Buffer> | null;
  try {
    first = await frames.next();
  } catch (error) {
    upstream.destroy();
    throw mapNetworkError(error, provider, signal);
  }
  let reading = false;
  const output = new Readable({
    read() {
      if (reading) return;
      const next = first !== null ? Promise.resolve(first) : frames.next();
      first = null;
      reading = true;
      next.then(
        (result) => {
          reading = false;
          output.push(result.done === true ? null : result.value);
        },
        (error: unknown) => output.destroy(error instanceof Error ? error : new Error(String(error))),
      );
    },
    // A consumer that stops early may leave a read pending on the upstream: close it directly.
    destroy(error, callback) {
      if (!upstream.destroyed) upstream.destroy();
      callback(error);
    },
  });
  return output;
}

async function* convertFrames(upstream: Readable, converter: SseFrameConverter): AsyncGenerator<Buffer> {
  const parser = new SseParser();
  for await (const chunk of upstream) {
    const text = converter.push(parser.push(chunk as Buffer));
    if (text !== '') yield Buffer.from(text);
  }
  const tail = converter.push(parser.finish()) + converter.finish();
  if (tail !== '') yield Buffer.from(tail);
}
