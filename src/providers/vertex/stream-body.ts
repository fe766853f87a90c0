import { Readable } from 'node:stream';
import { SseParser } from '../../streaming/sse-parser.ts';
import { mapNetworkError } from '../upstream-client.ts';
import type { GeminiStreamTranslator } from './gemini-minimal.ts';

/**
 * The upstream's Gemini SSE body as OpenAI chunk SSE bytes. The first frame is read before
 * this resolves, so a stream that opens with an error event fails the attempt like an error
 * status (and can be retried or failed over); a later failure breaks the stream, which the
 * gateway's relay ends with an error event.
 */
export async function openTranslatedStream(
  upstream: Readable,
  translator: GeminiStreamTranslator,
  provider: string,
  signal: AbortSignal,
): Promise<Readable> {
  const frames = translate(upstream, translator);
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
    destroy(error, callback) {
      if (!upstream.destroyed) upstream.destroy();
      callback(error);
    },
  });
  return output;
}

async function* translate(upstream: Readable, translator: GeminiStreamTranslator): AsyncGenerator<Buffer> {
  const parser = new SseParser();
  for await (const chunk of upstream) {
    const text = translator.push(parser.push(chunk as Buffer));
    if (text !== '') yield Buffer.from(text);
  }
  const tail = translator.push(parser.finish()) + translator.finish();
  if (tail !== '') yield Buffer.from(tail);
}
