import type { Readable } from 'node:stream';
import type { ProviderSettings } from '../config/settings.ts';
import type { UpstreamClient } from './upstream-client.ts';

/** A chat request as the gateway forwards it: OpenAI's shape, unknown fields kept. */
export type ChatRequestBody = Record<string, unknown> & { model: string };

export interface CallContext {
  signal: AbortSignal;
  requestId: string;
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
}

export type ProviderFactory = (settings: ProviderSettings, client: UpstreamClient) => ProviderAdapter;
