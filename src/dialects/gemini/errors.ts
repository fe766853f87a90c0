import type { GatewayError } from '../../errors/gateway-error.ts';
import { modelMethodOf } from './model-path.ts';

/** Google's error body (google.rpc.Status as JSON): `{"error":{"code","message","status","details"}}`. */
export interface GoogleErrorBody {
  error: {
    code: number;
    message: string;
    status: string;
    details: Array<{ '@type': string; reason: string; domain: string; metadata: Record<string, string> }>;
  };
}

/**
 * The HTTP status as Google's canonical status name (google.rpc.Code). The HTTP status stays
 * the gateway's; an upstream or store that is unavailable (503, 529) is UNAVAILABLE, any other
 * server-side failure (500, 502) INTERNAL.
 */
export function googleStatusOf(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 408:
    case 504:
      return 'DEADLINE_EXCEEDED';
    case 409:
      return 'ABORTED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 501:
      return 'UNIMPLEMENTED';
    case 503:
    case 529:
      return 'UNAVAILABLE';
    default:
      return status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION';
  }
}

/**
 * A GatewayError in Google's envelope. The gateway's error code and the instance that failed
 * travel in an `ErrorInfo` detail (`reason`, `metadata.provider`), as Google's own APIs do.
 */
export function renderGoogleError(error: GatewayError): GoogleErrorBody {
  const reason = error.code ?? error.type;
  const info = {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason,
    domain: 'model-gateway',
    metadata: { provider: error.provider },
  };
  return { error: { code: error.status, message: error.message, status: googleStatusOf(error.status), details: [info] } };
}

/** Whether a request URL belongs to the Gemini dialect (`/v1beta/...`, or a model method under `/v1/models/`). */
export function isGeminiDialectUrl(url: string): boolean {
  if (url.startsWith('/v1beta/')) return true;
  return url.startsWith('/v1/models/') && modelMethodOf(url) !== null;
}
