import type { Readable } from 'node:stream';
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { GatewayError, providerError } from '../errors/gateway-error.ts';

export interface UpstreamClientOptions {
  timeoutMs: number;
  connectTimeoutMs: number;
  connections: number;
}

export interface UpstreamRequest {
  /** The instance name, used in errors. */
  provider: string;
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer | Readable | null;
  signal?: AbortSignal;
}

export type UpstreamResponse = Dispatcher.ResponseData;

/**
 * One undici Pool per upstream origin, with keep-alive. Every provider call goes through
 * here: global fetch costs about five times the CPU (reference/stack.md).
 */
export class UpstreamClient {
  private readonly pools = new Map<string, Pool>();
  private readonly options: UpstreamClientOptions;

  constructor(options: UpstreamClientOptions) {
    this.options = options;
  }

  async request(request: UpstreamRequest): Promise<UpstreamResponse> {
    try {
      return await this.poolFor(request.url.origin).request({
        path: request.url.pathname + request.url.search,
        method: request.method as Dispatcher.HttpMethod,
        headers: request.headers,
        body: request.body ?? null,
        signal: request.signal ?? null,
      });
    } catch (error) {
      throw mapNetworkError(error, request.provider, request.signal);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.pools.values()].map((pool) => pool.close()));
    this.pools.clear();
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

/** Maps a failed upstream call to a GatewayError; an abort by our own signal is rethrown, a GatewayError kept. */
export function mapNetworkError(error: unknown, provider: string, signal?: AbortSignal): unknown {
  if (signal?.aborted) return error;
  // Already mapped (an adapter that converts a stream raised the upstream's own error event).
  if (error instanceof GatewayError) return error;
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    return providerError(`upstream ${provider} did not answer in time`, { provider, status: 504, code: 'upstream_timeout', cause: error });
  }
  if (error instanceof undiciErrors.ConnectTimeoutError) {
    return providerError(`upstream ${provider} could not be reached: connect timeout`, {
      provider,
      code: 'upstream_unreachable',
      cause: error,
    });
  }
  const reason = error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) || 'network error' : 'network error';
  return providerError(`upstream ${provider} could not be reached: ${reason}`, { provider, code: 'upstream_unreachable', cause: error });
}
