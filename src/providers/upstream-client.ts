import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import requestOn from 'undici/lib/api/api-request.js';
import undiciErrors from 'undici/lib/core/errors.js';
import undiciUtil from 'undici/lib/core/util.js';
import Pool from 'undici/lib/dispatcher/pool.js';
import { abortSourceOf, type AbortSource } from '../core/abort-source.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { providerError } from '../errors/gateway-error.ts';
import { currentTraceparent } from '../core/trace-context.ts';
import { mapNetworkError } from '../streaming/network-error.ts';
import { StreamingHandler, type StreamedUpstreamResponse } from '../streaming/upstream-body.ts';

export interface UpstreamClientOptions {
  timeoutMs: number;
  connectTimeoutMs: number;
  connections: number;
  /** Bound on an answer read into memory (`requestBuffered`, `readBody`); past it: 502. Default 64 MiB. */
  maxResponseBytes?: number;
}

export interface UpstreamRequest {
  /** The instance name, used in errors. */
  provider: string;
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer | Readable | null;
  signal?: AbortSignal;
  /** For `requestBuffered`: the caller's abort without an AbortSignal; wins over `signal`. */
  abort?: AbortSource;
}

export interface UpstreamResponse extends Dispatcher.ResponseData {
  /** The client's bound on reading this body whole (`readBody`); the default bound when absent. */
  maxBodyBytes?: number;
}

/** A whole upstream answer, read into memory (JSON endpoints). */
export interface BufferedUpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The body; for a non-2xx status, only its first `maximumErrorBodyBytes`. */
  body: Buffer;
}

/** How much of an error answer is kept: enough for any provider's error JSON. */
export const maximumErrorBodyBytes = 64 * 1024;

/** The default of UPSTREAM_MAX_RESPONSE_BYTES (src/config/schema.ts has the same). */
export const defaultMaxResponseBytes = 64 * 1024 * 1024;

/** An answer past the bound: the upstream's fault (502), and reading it is stopped. */
export function responseTooLarge(provider: string, limit: number): GatewayError {
  return providerError(`upstream ${provider} answered with a body larger than ${limit} bytes`, {
    provider,
    code: 'upstream_response_too_large',
  });
}

/** The attempt's `traceparent` (src/core/trace-context.ts) while tracing is on; else the headers as they are. */
function withTrace(headers: Record<string, string>): Record<string, string> {
  const traceparent = currentTraceparent();
  return traceparent === undefined ? headers : { ...headers, traceparent };
}

/**
 * One undici Pool per upstream origin, with keep-alive. Every provider call goes through
 * here: global fetch costs about five times the CPU (reference/stack.md).
 */
export class UpstreamClient {
  private readonly pools = new Map<string, Pool>();
  private readonly options: UpstreamClientOptions;
  private readonly maxResponseBytes: number;

  constructor(options: UpstreamClientOptions) {
    this.options = options;
    this.maxResponseBytes = options.maxResponseBytes ?? defaultMaxResponseBytes;
  }

  async request(request: UpstreamRequest): Promise<UpstreamResponse> {
    try {
      const response: UpstreamResponse = await requestOn.call(this.poolFor(request.url.origin), {
        path: request.url.pathname + request.url.search,
        method: request.method as Dispatcher.HttpMethod,
        headers: withTrace(request.headers),
        body: request.body ?? null,
        signal: request.signal ?? null,
      });
      response.maxBodyBytes = this.maxResponseBytes;
      return response;
    } catch (error) {
      throw mapNetworkError(error, request.provider, request.signal);
    }
  }

  /**
   * The same call with the whole answer read into memory. It skips the response stream and
   * async-context machinery of `request`, which JSON answers don't need (the hot path).
   */
  requestBuffered(request: UpstreamRequest): Promise<BufferedUpstreamResponse> {
    const abort = request.abort ?? (request.signal === undefined ? undefined : abortSourceOf(request.signal));
    // One promise, no async wrapper: failures are mapped where they are rejected.
    return new Promise<BufferedUpstreamResponse>((resolve, reject) => {
      const fail = (error: unknown): void => reject(mapNetworkError(error, request.provider, abort));
      try {
        const limit = { bytes: this.maxResponseBytes, provider: request.provider };
        const handler = new BufferingHandler(resolve, fail, abort, limit);
        this.poolFor(request.url.origin).dispatch(
          {
            path: request.url.pathname + request.url.search,
            method: request.method as Dispatcher.HttpMethod,
            headers: withTrace(request.headers),
            body: request.body ?? null,
          },
          handler,
        );
      } catch (error) {
        fail(error);
      }
    });
  }

  /**
   * A streaming answer (SSE) through `Pool.dispatch`: the body is a plain Readable fed by the
   * handler, without `request`'s AsyncResource, body mixin and AbortSignal listener; the
   * caller's `abort` (or `signal`) aborts the request.
   */
  async requestStream(request: UpstreamRequest): Promise<StreamedUpstreamResponse> {
    const abort = request.abort ?? (request.signal === undefined ? undefined : abortSourceOf(request.signal));
    try {
      return await new Promise<StreamedUpstreamResponse>((resolve, reject) => {
        this.poolFor(request.url.origin).dispatch(
          {
            path: request.url.pathname + request.url.search,
            method: request.method as Dispatcher.HttpMethod,
            headers: withTrace(request.headers),
            body: request.body ?? null,
          },
          new StreamingHandler(resolve, reject, abort),
        );
      });
    } catch (error) {
      throw mapNetworkError(error, request.provider, abort);
    }
  }

  /**
   * Shutdown deadline: every call in flight, streams included, fails with `error` (a stream's
   * relay then ends its answer with an error event); later calls open fresh pools.
   */
  cutAll(error: GatewayError): void {
    const pools = [...this.pools.values()];
    this.pools.clear();
    for (const pool of pools) void pool.destroy(error).catch(() => undefined);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.pools.values()].map((pool) => pool.close()));
    this.pools.clear();
  }

  /**
   * Hot reload: the pools of origins no provider uses any more leave the client at once (a new
   * call opens a fresh pool) and close once the calls they carry, streams included, are done.
   */
  async retire(origins: Iterable<string>): Promise<void> {
    const closing: Array<Promise<void>> = [];
    for (const origin of origins) {
      const pool = this.pools.get(origin);
      if (pool === undefined) continue;
      this.pools.delete(origin);
      closing.push(pool.close());
    }
    await Promise.allSettled(closing);
  }

  private poolFor(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (pool === undefined) {
      pool = new Pool(origin, {
        connections: this.options.connections,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 600_000,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
        connect: { timeout: this.options.connectTimeoutMs },
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }
}

/**
 * Collects one answer; an abort of the caller's source aborts the request. An error answer
 * (non-2xx) is kept up to `maximumErrorBodyBytes` and settles as soon as it has that much, or
 * with what arrived if its body breaks: the status is what the caller maps. A successful
 * answer past `limit.bytes` (announced or received) fails with `responseTooLarge` and aborts
 * the request.
 *
 * It speaks undici's own handler calls (`onConnect`, `onHeaders`, ...: marked deprecated in
 * undici 7's types, but what its clients call; a handler of the newer `onRequestStart` kind is
 * adapted to them by a wrapper per request that also turns the raw headers into an object).
 * The raw headers are only read for `content-length` here; the object is made when read (ADR 12).
 */
class BufferingHandler implements Dispatcher.DispatchHandler {
  private abortRequest: ((error?: Error) => void) | null = null;
  private statusCode = 0;
  private rawHeaders: Buffer[] = [];
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private readonly resolve: (response: BufferedUpstreamResponse) => void;
  private readonly reject: (error: unknown) => void;
  private readonly abort: AbortSource | undefined;
  private readonly unsubscribe: () => void;
  private readonly limit: { bytes: number; provider: string };

  constructor(
    resolve: (response: BufferedUpstreamResponse) => void,
    reject: (error: unknown) => void,
    abort: AbortSource | undefined,
    limit: { bytes: number; provider: string },
  ) {
    this.resolve = resolve;
    this.reject = reject;
    this.abort = abort;
    this.limit = limit;
    this.unsubscribe = abort?.onAbort(() => this.abortRequest?.(new undiciErrors.RequestAbortedError())) ?? noop;
  }

  onConnect(abort: (error?: Error) => void): void {
    this.abortRequest = abort;
    if (this.abort?.aborted === true) abort(new undiciErrors.RequestAbortedError());
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.statusCode = statusCode;
    this.rawHeaders = rawHeaders;
    if (this.succeeded() && contentLengthOf(rawHeaders) > this.limit.bytes) this.tooLarge();
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.settled) return true;
    this.size += chunk.length;
    if (this.succeeded() && this.size > this.limit.bytes) {
      this.tooLarge();
      return true;
    }
    this.chunks.push(chunk);
    if (!this.succeeded() && this.size >= maximumErrorBodyBytes) {
      // Enough of an error body: answer now rather than wait for (or hang on) the rest.
      this.finish();
      this.abortRequest?.(new undiciErrors.RequestAbortedError());
    }
    return true;
  }

  onComplete(): void {
    this.finish();
  }

  onError(error: Error): void {
    if (this.settled) return;
    // A broken error body still leaves the status to report (unless the caller gave up).
    if (this.statusCode !== 0 && !this.succeeded() && this.abort?.aborted !== true) return this.finish();
    this.settled = true;
    this.unsubscribe();
    this.reject(error);
  }

  private tooLarge(): void {
    this.settled = true;
    this.unsubscribe();
    this.chunks.length = 0;
    this.reject(responseTooLarge(this.limit.provider, this.limit.bytes));
    this.abortRequest?.(new undiciErrors.RequestAbortedError());
  }

  private succeeded(): boolean {
    return this.statusCode >= 200 && this.statusCode <= 299;
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    this.unsubscribe();
    const body = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    this.resolve(new BufferedAnswer(this.statusCode, this.rawHeaders, body));
  }
}

/** A buffered answer whose header object is made on first read (a JSON success never reads it). */
class BufferedAnswer implements BufferedUpstreamResponse {
  readonly statusCode: number;
  readonly body: Buffer;
  #rawHeaders: Buffer[];
  #headers: IncomingHttpHeaders | null = null;

  constructor(statusCode: number, rawHeaders: Buffer[], body: Buffer) {
    this.statusCode = statusCode;
    this.#rawHeaders = rawHeaders;
    this.body = body;
  }

  get headers(): IncomingHttpHeaders {
    return (this.#headers ??= undiciUtil.parseHeaders(this.#rawHeaders) as IncomingHttpHeaders);
  }
}

/** The `content-length` of raw response headers; 0 when absent or not a number. */
function contentLengthOf(rawHeaders: readonly Buffer[]): number {
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] as Buffer;
    if (name.length === 14 && undiciUtil.headerNameToString(name) === 'content-length') {
      return Number((rawHeaders[index + 1] as Buffer).toString('latin1'));
    }
  }
  return 0;
}

function noop(): void {}
