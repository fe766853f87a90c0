import { invalidRequest } from '../errors/gateway-error.ts';

/** The fields every JSON model endpoint routes on. */
export interface ModelFields {
  /** The body as the client sent it, unknown fields included. */
  body: Record<string, unknown>;
  /** The `model` selector. */
  selector: string;
  /** The `provider` routing hint, if any. */
  hint: string | undefined;
}

/** Checks that the body is an object with a `model` and, optionally, a `provider` hint. */
export function readModelFields(body: unknown): ModelFields {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw invalidRequest('request body must be a JSON object', { code: 'invalid_body' });
  }
  const fields = body as Record<string, unknown>;
  const model = fields['model'];
  if (model === undefined || model === null || model === '') {
    throw invalidRequest('you must provide a model parameter', { code: 'missing_field', param: 'model' });
  }
  if (typeof model !== 'string') throw invalidRequest('model must be a string', { code: 'invalid_body', param: 'model' });
  const hint = fields['provider'];
  if (hint !== undefined && (typeof hint !== 'string' || hint === '')) {
    throw invalidRequest('provider must be the name of a provider instance', { code: 'invalid_body', param: 'provider' });
  }
  return { body: fields, selector: model, hint };
}

/** The body sent upstream: the target's bare model id, the `provider` hint removed. */
export function upstreamBodyOf(body: Record<string, unknown>, model: string): Record<string, unknown> {
  const { provider: _hint, ...rest } = body;
  rest['model'] = model; // `rest` is a fresh copy: set in place, in the client's key order
  return rest;
}

/** A stream flag that is a boolean, null or absent. */
export function readStreamFlag(body: Record<string, unknown>): boolean {
  const stream = body['stream'];
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') {
    throw invalidRequest('stream must be a boolean', { code: 'invalid_body', param: 'stream' });
  }
  return stream === true;
}
