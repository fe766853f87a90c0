import { GatewayError } from '../errors/gateway-error.ts';

const maximumMessageLength = 2000;

/**
 * Maps an upstream error answer to the gateway envelope (CONTRACT section 4): 401/403 ->
 * authentication_error, 404 -> not_found_error, 429 -> rate_limit_error, other 4xx ->
 * invalid_request_error with the same status, 5xx -> provider_error. The upstream message is
 * kept; a `Retry-After` header is carried over.
 */
export function mapUpstreamError(
  status: number,
  bodyText: string,
  provider: string,
  retryAfter?: string | string[] | undefined,
): GatewayError {
  const details = readErrorDetails(bodyText);
  const message = details.message || `upstream ${provider} answered with status ${status}`;
  const headers: Record<string, string> = {};
  const retry = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
  if (retry !== undefined && /^\d+$/.test(retry.trim())) headers['Retry-After'] = retry.trim();
  const options = { provider, param: details.param, headers };
  if (status === 401 || status === 403) {
    return new GatewayError('authentication_error', message, { ...options, status });
  }
  if (status === 404) return new GatewayError('not_found_error', message, options);
  if (status === 429) return new GatewayError('rate_limit_error', message, options);
  if (status >= 400 && status < 500) {
    return new GatewayError('invalid_request_error', message, { ...options, status, code: 'upstream_error' });
  }
  return new GatewayError('provider_error', message, {
    ...options,
    status: status >= 500 && status <= 599 ? status : 502,
    code: 'upstream_error',
  });
}

interface ErrorDetails {
  message: string;
  param: string | null;
}

/** Reads `{error: {message, param}}`, `{error: "..."}`, `{message}` or plain text. */
export function readErrorDetails(bodyText: string): ErrorDetails {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return { message: truncate(bodyText.trim()), param: null };
  }
  const root = asRecord(parsed);
  const error = root?.['error'];
  const inner = asRecord(error);
  const message = inner?.['message'] ?? (typeof error === 'string' ? error : undefined) ?? root?.['message'];
  const param = inner?.['param'];
  return {
    message: typeof message === 'string' ? truncate(message) : truncate(bodyText.trim()),
    param: typeof param === 'string' ? param : null,
  };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function truncate(text: string): string {
  return text.length > maximumMessageLength ? `${text.slice(0, maximumMessageLength)}…` : text;
}
