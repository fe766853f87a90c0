import { invalidRequest } from '../errors/gateway-error.ts';
import type { ChatRequestBody } from '../providers/provider.ts';

export interface ChatRequest {
  /** The body as the client sent it, unknown fields included. */
  body: Record<string, unknown>;
  /** The `model` selector. */
  selector: string;
  /** The `provider` routing hint, if any. */
  hint: string | undefined;
  stream: boolean;
  /** Whether a streaming client asked for the usage chunk. */
  includeUsage: boolean;
}

/** Checks the fields the gateway itself relies on; the upstream validates the rest. */
export function readChatRequest(body: unknown): ChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw invalidRequest('request body must be a JSON object', { code: 'invalid_body' });
  }
  const fields = body as Record<string, unknown>;
  const model = fields['model'];
  if (model === undefined || model === null || model === '') {
    throw invalidRequest('you must provide a model parameter', { code: 'missing_field', param: 'model' });
  }
  if (typeof model !== 'string') throw invalidRequest('model must be a string', { code: 'invalid_body', param: 'model' });
  if (!Array.isArray(fields['messages'])) {
    const code = fields['messages'] === undefined ? 'missing_field' : 'invalid_body';
    throw invalidRequest('messages must be an array of messages', { code, param: 'messages' });
  }
  const hint = fields['provider'];
  if (hint !== undefined && (typeof hint !== 'string' || hint === '')) {
    throw invalidRequest('provider must be the name of a provider instance', { code: 'invalid_body', param: 'provider' });
  }
  const stream = fields['stream'];
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') {
    throw invalidRequest('stream must be a boolean', { code: 'invalid_body', param: 'stream' });
  }
  const streamOptions = fields['stream_options'];
  if (streamOptions !== undefined && streamOptions !== null && (typeof streamOptions !== 'object' || Array.isArray(streamOptions))) {
    throw invalidRequest('stream_options must be an object', { code: 'invalid_body', param: 'stream_options' });
  }
  const includeUsage = (streamOptions as { include_usage?: unknown } | null | undefined)?.include_usage === true;
  return { body: fields, selector: model, hint, stream: stream === true, includeUsage };
}

/**
 * The body sent upstream: the bare model id, the `provider` hint removed, and stream usage
 * always requested so the gateway can meter streams.
 */
export function buildUpstreamBody(request: ChatRequest, model: string): ChatRequestBody {
  const { provider: _hint, ...rest } = request.body;
  const upstream: ChatRequestBody = { ...rest, model };
  if (request.stream) {
    const options = (request.body['stream_options'] as Record<string, unknown> | null | undefined) ?? {};
    upstream['stream_options'] = { ...options, include_usage: true };
  }
  return upstream;
}
