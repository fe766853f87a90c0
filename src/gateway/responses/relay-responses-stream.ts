import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { toGatewayError } from '../../errors/envelope.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { mapNetworkError } from '../../streaming/network-error.ts';
import type { UsageObject } from '../../streaming/chat-chunk.ts';
import type { ResponsesStreamTranslator } from './stream-translators.ts';
import { waitForDrain } from '../../streaming/drain.ts';

export interface ResponsesRelayResult {
  usage: UsageObject | null;
  /** The upstream stream ran to its end. */
  completed: boolean;
  /** The client went away first; the upstream request was aborted. */
  clientClosed: boolean;
  /** What broke the stream, if the upstream failed mid-way. */
  error: unknown;
  /** `performance.now()` of the first upstream event written (time to first token, for the request log). */
  firstByteAt?: number | null;
}

/**
 * Relays an upstream stream to a client of `/v1/responses` through a translator (native
 * passthrough or chat -> Responses events), holding writes back while the client's socket is
 * full. The caller has written the response head.
 */
export async function relayResponsesStream(
  upstream: Readable,
  response: ServerResponse,
  translator: ResponsesStreamTranslator,
  provider: string,
  signal: AbortSignal,
): Promise<ResponsesRelayResult> {
  const closed = (): ResponsesRelayResult => {
    if (!response.destroyed) response.destroy();
    return { usage: translator.usage(), completed: false, clientClosed: true, error: null };
  };
  let firstByteAt: number | null = null;
  try {
    const head = translator.start();
    if (head !== '') response.write(head);
    for await (const chunk of upstream) {
      const text = translator.push(chunk as Buffer);
      if (text.length > 0) firstByteAt ??= performance.now();
      if (text.length > 0 && !response.write(text)) await waitForDrain(response);
      if (signal.aborted) break;
    }
    if (signal.aborted) return closed();
    const tail = translator.end();
    await translator.settle?.();
    response.end(tail);
    return { usage: translator.usage(), completed: true, clientClosed: false, error: null, firstByteAt };
  } catch (error) {
    if (signal.aborted) return closed();
    upstream.destroy();
    const failure = error instanceof GatewayError ? error : toGatewayError(mapNetworkError(error, provider));
    response.end(translator.fail(failure));
    return { usage: translator.usage(), completed: false, clientClosed: false, error, firstByteAt };
  }
}
