import type { GatewayError } from '../../errors/gateway-error.ts';

/** Anthropic's error body: `{"type":"error","error":{"type","message"}}`. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

/**
 * The gateway's error types in Anthropic's vocabulary. The HTTP status stays the gateway's;
 * only the body changes. An upstream's 403 is a permission error there, a body over the
 * limit is `request_too_large`, and an unavailable upstream or store (503, 529) is
 * `overloaded_error` (retryable), any other server-side failure `api_error`.
 */
export function anthropicErrorType(error: GatewayError): string {
  switch (error.type) {
    case 'invalid_request_error':
      return error.status === 413 ? 'request_too_large' : 'invalid_request_error';
    case 'authentication_error':
      return error.status === 403 ? 'permission_error' : 'authentication_error';
    case 'permission_error':
    case 'not_found_error':
    case 'rate_limit_error':
      return error.type;
    case 'provider_error':
      return error.status === 503 || error.status === 529 ? 'overloaded_error' : 'api_error';
    case 'internal_error':
      return 'api_error';
  }
}

export function renderAnthropicError(error: GatewayError): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(error), message: error.message } };
}

/** Whether a request URL belongs to Anthropic's dialect (`/v1/messages` and below). */
export function isAnthropicDialectUrl(url: string): boolean {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path === '/v1/messages' || path.startsWith('/v1/messages/');
}
