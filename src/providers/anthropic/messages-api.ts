import { PassThrough, pipeline, type Readable } from 'node:stream';
import type { CallContext, MessagesApi, MessagesApiRequest, MessagesApiResult } from '../provider.ts';
import { readBody, upstreamErrorOf } from '../upstream-body.ts';
import { mapNetworkError } from '../../streaming/network-error.ts';
import type { UpstreamClient } from '../upstream-client.ts';
import { mapUpstreamError } from '../upstream-errors.ts';
import { SseParser } from '../../streaming/sse-parser.ts';
import { errorStatuses } from './convert-stream.ts';
import { isRecord } from './wire.ts';

export interface MessagesApiOptions {
  provider: string;
  /** The API base, ending in `/v1`. */
  apiBase: string;
  /** `x-api-key` and the default `anthropic-version`. */
  credentials: Record<string, string>;
}

/**
 * The Messages API as the instance serves it, untranslated: the client's body and its
 * `anthropic-version` / `anthropic-beta` headers go upstream as they are (the key is always
 * the instance's), and the answer comes back as the upstream wrote it.
 */
export function createMessagesApi(client: UpstreamClient, options: MessagesApiOptions): MessagesApi {
  const { provider } = options;
  const messagesUrl = new URL(`${options.apiBase}/messages`);
  const countUrl = new URL(`${options.apiBase}/messages/count_tokens`);
  const { 'x-api-key': key, ...defaults } = options.credentials;
  const send = async (url: URL, request: MessagesApiRequest, stream: boolean, context: CallContext) => {
    const accept = stream ? 'text/event-stream' : 'application/json';
    const headers = {
      'content-type': 'application/json',
      accept,
      ...defaults,
      ...request.headers,
      ...(key === undefined ? {} : { 'x-api-key': key }),
    };
    const body = JSON.stringify(request.body);
    const response = await client.request({ provider, url, method: 'POST', headers, body, signal: context.signal });
    if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, provider);
    return response;
  };
  return {
    async create(request: MessagesApiRequest, context: CallContext): Promise<MessagesApiResult> {
      const stream = request.body['stream'] === true;
      const response = await send(messagesUrl, request, stream, context);
      if (!stream) return { kind: 'json', body: await readBody(response, provider, context.signal) };
      return { kind: 'stream', body: await openNativeStream(response.body, provider, context.signal) };
    },
    async countTokens(request: MessagesApiRequest, context: CallContext): Promise<string> {
      const response = await send(countUrl, request, false, context);
      return readBody(response, provider, context.signal);
    },
  };
}

/**
 * The upstream's SSE body, read up to its first event before the attempt counts as started:
 * a stream that opens with an `error` event (Anthropic sends `overloaded_error` this way)
 * fails the attempt like an error status, so it can be retried or failed over. The bytes
 * read are replayed unchanged ahead of the rest.
 */
export function openNativeStream(upstream: Readable, provider: string, signal: AbortSignal): Promise<Readable> {
  return new Promise((resolve, reject) => {
    const parser = new SseParser();
    const head: Buffer[] = [];
    const stop = (): void => {
      upstream.off('data', onData).off('end', onEnd).off('error', onError);
      upstream.pause();
    };
    // Destroying an undici body emits an abort error that nobody waits for any more.
    const discard = (): void => {
      upstream.on('error', () => undefined);
      upstream.destroy();
    };
    const onData = (chunk: Buffer): void => {
      head.push(chunk);
      const first = parser.push(chunk)[0];
      if (first === undefined) return;
      stop();
      if (first.event !== 'error') return resolve(replayed(head, upstream, false));
      discard();
      reject(leadingError(first.data, provider));
    };
    const onEnd = (): void => (stop(), resolve(replayed(head, upstream, true)));
    const onError = (error: unknown): void => {
      stop();
      discard();
      reject(mapNetworkError(error, provider, signal));
    };
    upstream.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

/** The bytes read ahead, then the rest of the upstream; destroying the result closes the upstream. */
function replayed(head: Buffer[], upstream: Readable, ended: boolean): Readable {
  const output = new PassThrough();
  for (const chunk of head) output.write(chunk);
  if (ended) output.end();
  else pipeline(upstream, output, () => undefined);
  return output;
}

function leadingError(data: string, provider: string): Error {
  let type: unknown;
  try {
    const parsed: unknown = JSON.parse(data);
    type = isRecord(parsed) && isRecord(parsed['error']) ? parsed['error']['type'] : undefined;
  } catch {
    type = undefined;
  }
  const status = (typeof type === 'string' ? errorStatuses[type] : undefined) ?? 502;
  return mapUpstreamError(status, data, provider);
}
