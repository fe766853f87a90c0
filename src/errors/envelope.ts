import { GatewayError, internalError, invalidRequest } from './gateway-error.ts';

export interface ErrorEnvelope {
  error: {
    type: string;
    message: string;
    code: string | null;
    param: string | null;
    provider: string;
    status_code: number;
  };
}

/** The envelope of CONTRACT section 4. The only place a GatewayError becomes a body. */
export function renderEnvelope(error: GatewayError): ErrorEnvelope {
  return {
    error: {
      type: error.type,
      message: error.message,
      code: error.code,
      param: error.param,
      provider: error.provider,
      status_code: error.status,
    },
  };
}

/** States the limit and the setting that raises it. */
function bodyTooLargeMessage(limit: number | undefined): string {
  if (limit === undefined) return 'request body is larger than BODY_SIZE_LIMIT';
  const size = limit % 1024 ** 2 === 0 ? `${limit / 1024 ** 2}MB` : limit % 1024 === 0 ? `${limit / 1024}KB` : `${limit} bytes`;
  return `request body is larger than the limit of ${size} (${limit} bytes); BODY_SIZE_LIMIT (server.body_size_limit) sets it`;
}

interface FrameworkError {
  code?: unknown;
  statusCode?: unknown;
}

/**
 * Turns anything thrown on a request into a GatewayError. Framework errors (body too large,
 * bad content length) keep their meaning; anything unknown becomes a 500 that leaks nothing.
 * `bodyLimit`: the route's body limit in bytes, stated by a 413.
 */
export function toGatewayError(thrown: unknown, bodyLimit?: number): GatewayError {
  if (thrown instanceof GatewayError) return thrown;
  const framework = (typeof thrown === 'object' && thrown !== null ? thrown : {}) as FrameworkError;
  switch (framework.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return invalidRequest(bodyTooLargeMessage(bodyLimit), {
        code: 'body_too_large',
        status: 413,
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidRequest('request body is not valid JSON', { code: 'invalid_json' });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalidRequest('request body does not match its Content-Length', {
        code: 'invalid_body',
      });
    default:
      break;
  }
  if (typeof framework.statusCode === 'number' && framework.statusCode >= 400 && framework.statusCode < 500) {
    const message = thrown instanceof Error ? thrown.message : 'invalid request';
    return invalidRequest(message, { status: framework.statusCode });
  }
  return internalError();
}

/**
 * The status a failed attempt is recorded with (usage records, attempt lists): what the client
 * is answered for `thrown` (an unknown error is a 500, not an upstream 502), or 499 when the
 * client left first.
 */
export function attemptStatus(thrown: unknown, clientLeft: boolean): number {
  return clientLeft ? 499 : toGatewayError(thrown).status;
}
