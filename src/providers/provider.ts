import type { AbortSource } from '../core/abort-source.ts';
import type { Readable } from 'node:stream';
import type { ProviderSettings } from '../config/settings.ts';
import type { UpstreamClient, UpstreamResponse } from './upstream-client.ts';

/** A chat request as the gateway forwards it: OpenAI's shape, unknown fields kept. */
export type ChatRequestBody = Record<string, unknown> & { model: string };

export interface CallContext {
  readonly signal: AbortSignal;
  readonly requestId: string;
  /** The client's abort without an AbortSignal (cheaper, see ClientAbort); else `signal` is used. */
  readonly abort?: AbortSource;
}

/** A successful non-streaming answer; `body` is the upstream JSON text, unchanged. */
export interface JsonResult {
  kind: 'json';
  body: string;
}

/** A successful streaming answer: the upstream's OpenAI-style SSE bytes. */
export interface StreamResult {
  kind: 'stream';
  body: Readable;
}

/**
 * A raw request relayed to an instance (embeddings, audio, files, batches, passthrough):
 * the adapter resolves `path` under its base URL and adds its own credentials.
 */
export interface ForwardRequest {
  method: string;
  /** Relative to the instance's base URL, without a leading slash; may carry a query (`files?purpose=batch`). */
  path: string;
  /** Headers to send besides the credentials (already stripped of the client's). */
  headers: Record<string, string>;
  body?: string | Buffer | Readable | null;
}

export interface UpstreamModel {
  id: string;
  created?: number;
}

/**
 * What every provider adapter does. The gateway core calls only this; differences between
 * providers live behind it (STYLE habit 1).
 */
export interface ProviderAdapter {
  readonly name: string;
  readonly type: string;
  chatCompletion(request: ChatRequestBody, context: CallContext): Promise<JsonResult | StreamResult>;
  listModels(signal: AbortSignal): Promise<UpstreamModel[]>;
  /**
   * Sends a raw request to the instance with its credentials and returns the response as is,
   * whatever its status (the caller maps errors with `upstreamErrorOf`).
   */
  forward(request: ForwardRequest, context: CallContext): Promise<UpstreamResponse>;
  /** The instance's base URL (realtime derives its WebSocket URL from it). */
  readonly baseUrl: string;
  /** The headers that carry the instance's credentials (realtime sends them on the upgrade). */
  credentialHeaders(): Record<string, string>;
}

export type ProviderFactory = (settings: ProviderSettings, client: UpstreamClient) => ProviderAdapter;
