import {
  defaultMaxResponseBytes,
  maximumErrorBodyBytes,
  responseTooLarge,
  type BufferedUpstreamResponse,
  type UpstreamResponse,
} from './upstream-client.ts';
import { mapNetworkError } from '../streaming/network-error.ts';
import { mapUpstreamError } from './upstream-errors.ts';
import type { StreamedUpstreamResponse } from '../streaming/upstream-body.ts';

/**
 * The whole body as text; a failure while reading it is the upstream's (502/504), not ours.
 * A body past the client's bound (UPSTREAM_MAX_RESPONSE_BYTES) is a 502 and is not read on.
 */
export async function readBody(response: UpstreamResponse, provider: string, signal: AbortSignal): Promise<string> {
  const limit = response.maxBodyBytes ?? defaultMaxResponseBytes;
  const tooLarge = (): Error => {
    response.body.destroy();
    return responseTooLarge(provider, limit);
  };
  if (Number(response.headers['content-length'] ?? 0) > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > limit) break;
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw mapNetworkError(error, provider, signal);
  }
  if (size > limit) throw tooLarge();
  return textOf(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
}

/** Reads a bounded error body and maps the status per CONTRACT 4. */
export async function upstreamErrorOf(
  response: Pick<UpstreamResponse, 'statusCode' | 'headers' | 'body'> | StreamedUpstreamResponse,
  provider: string,
): Promise<Error> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size > maximumErrorBodyBytes) {
        response.body.destroy();
        break;
      }
    }
  } catch {
    // A broken error body still leaves the status to report.
  }
  return mapUpstreamError(response.statusCode, Buffer.concat(chunks).toString('utf8'), provider, response.headers);
}

/** `upstreamErrorOf` for an answer read whole (`UpstreamClient.requestBuffered`). */
export function bufferedUpstreamErrorOf(response: BufferedUpstreamResponse, provider: string): Error {
  return mapUpstreamError(response.statusCode, textOf(response.body), provider, response.headers);
}

/** A body as UTF-8 text without a leading byte-order mark, as undici's `body.text()` reads it. */
export function textOf(body: Buffer): string {
  const bom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  return body.toString('utf8', bom ? 3 : 0);
}
