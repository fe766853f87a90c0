import type { AbortSource } from '../core/abort-source.ts';
import type { Readable } from 'node:stream';
import type { ProviderSettings } from './provider-settings.ts';
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
  /** The target's model id when the request is for one model (an adapter whose URL names it, Azure's deployments). */
  model?: string;
  /**
   * Gemini's native API surfaces: `native` sends the path to the native base even when it is not a
   * model method (`files/{id}`), `upload` to its upload base (`{origin}/upload/v1beta/...`). Other
   * adapters ignore it.
   */
  surface?: 'native' | 'upload';
}

/**
 * A request in Anthropic's Messages dialect for an instance that speaks it natively: the
 * client's body (the target's model, the gateway's routing hint removed) and the API's own
 * request headers the client sent (`anthropic-version`, `anthropic-beta`).
 */
export interface MessagesApiRequest {
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/** A 2xx answer of a native Messages call: the JSON text, or the SSE bytes as sent. */
export type MessagesApiResult = { kind: 'json'; body: string } | { kind: 'stream'; body: Readable };

/** Capability of an adapter whose instances serve the Messages API (`/v1/messages` is then not translated). */
export interface MessagesApi {
  /** `POST /messages`; a non-2xx answer or a stream opening with an error event throws. */
  create(request: MessagesApiRequest, context: CallContext): Promise<MessagesApiResult>;
  /** `POST /messages/count_tokens`: the upstream's JSON answer. */
  countTokens(request: MessagesApiRequest, context: CallContext): Promise<string>;
  /** Whether this model is served natively (absent: every model is); others get the chat translation. */
  serves?(model: string): boolean;
}

/** The adapter's native Messages API when it serves `model` natively, else undefined. */
export function messagesApiFor(adapter: { readonly messagesApi?: MessagesApi }, model: string): MessagesApi | undefined {
  const api = adapter.messagesApi;
  return api !== undefined && (api.serves?.(model) ?? true) ? api : undefined;
}

/**
 * Capability of an adapter whose upstream has no OpenAI-shaped `POST /embeddings` (Bedrock,
 * Vertex, Gemini's native API): takes OpenAI's embeddings request (the target's bare model
 * id in `model`, the routing hint removed) and answers OpenAI's JSON text
 * (`{object:"list", data:[{object:"embedding", index, embedding}], model, usage}`); a non-2xx
 * upstream answer throws the mapped GatewayError.
 */
export interface EmbeddingsApi {
  create(request: ChatRequestBody, context: CallContext): Promise<string>;
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
  /** The realtime WebSocket URL for the session's query (`model` the target's) when it is not `{baseUrl}/realtime` (Azure). */
  realtimeUrl?(query: URLSearchParams): string;
  /** YAML `forward_account_headers: true`: passthrough forwards the client's account-selecting headers (else dropped). */
  readonly forwardAccountHeaders?: boolean;
  /** YAML `resources_default: true`: the instance of /v1 resource calls without a `provider` hint. */
  readonly resourcesDefault?: boolean;
  /** Azure: the model ids a deployment named in a passthrough path serves; null for one the instance does not map. */
  deploymentModels?(deployment: string): readonly string[] | null;
  /** Present when the instance takes Messages API requests natively. */
  readonly messagesApi?: MessagesApi;
  /** Present when embeddings are not OpenAI's `POST {base_url}/embeddings` (then `forward` is used). */
  readonly embeddingsApi?: EmbeddingsApi;
}

export type ProviderFactory = (settings: ProviderSettings, client: UpstreamClient) => ProviderAdapter;
