import undiciErrors from 'undici/lib/core/errors.js';
import { GatewayError, providerError } from '../errors/gateway-error.ts';
import { SseEventTooLargeError } from './sse-parser.ts';

/** Maps a failed upstream call to a GatewayError; an abort by our own signal is rethrown, a GatewayError kept. */
export function mapNetworkError(error: unknown, provider: string, signal?: { readonly aborted: boolean }): unknown {
  if (signal?.aborted) return error;
  // Already mapped (an adapter that converts a stream raised the upstream's own error event).
  if (error instanceof GatewayError) return error;
  if (error instanceof SseEventTooLargeError) {
    return providerError(`upstream ${provider} sent a stream event larger than ${error.limit} characters`, {
      provider,
      code: 'upstream_event_too_large',
      cause: error,
    });
  }
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
