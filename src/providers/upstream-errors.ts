import type { ErrorCode } from '../errors/codes.ts';
import { GatewayError } from '../errors/gateway-error.ts';

const maximumMessageLength = 2000;

/** The upstream answer's headers (lower-case names, as Node and undici give them). */
export type UpstreamErrorHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * Maps an upstream error answer to the gateway envelope (CONTRACT section 4): 401/403 ->
 * authentication_error, 404 -> not_found_error, 429 -> rate_limit_error with code
 * `upstream_rate_limited`, other 4xx -> invalid_request_error with the same status, 5xx ->
 * provider_error. The upstream message is kept; `Retry-After` and `retry-after-ms` are carried over.
 */
export function mapUpstreamError(
  status: number,
  bodyText: string,
  provider: string,
  upstreamHeaders: UpstreamErrorHeaders = {},
): GatewayError {
  const details = readErrorDetails(bodyText);
  const message = details.message || `upstream ${provider} answered with status ${status}`;
  const options = { provider, param: details.param, headers: retryHeadersOf(upstreamHeaders) };
  if (status === 401 || status === 403) {
    return new GatewayError('authentication_error', message, { ...options, status });
  }
  if (status === 404) return new GatewayError('not_found_error', message, options);
  if (status === 429) return new GatewayError('rate_limit_error', message, { ...options, code: 'upstream_rate_limited' });
  if (status >= 400 && status < 500) {
    return new GatewayError('invalid_request_error', message, {
      ...options,
      status,
      code: keptCodes.get(details.code ?? '') ?? 'upstream_error',
    });
  }
  return new GatewayError('provider_error', message, {
    ...options,
    status: status >= 500 && status <= 599 ? status : 502,
    code: 'upstream_error',
  });
}

/** Upstream `error.code` values of a 4xx that the envelope keeps (Azure's content filter refusing a prompt). */
const keptCodes: ReadonlyMap<string, ErrorCode> = new Map([['content_filter', 'content_filter']]);

/** `Retry-After` (whole seconds) and `retry-after-ms` (OpenAI's, milliseconds) as the client should see them. */
function retryHeadersOf(upstreamHeaders: UpstreamErrorHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  const seconds = firstValue(upstreamHeaders['retry-after']);
  if (seconds !== undefined && /^\d+$/.test(seconds)) headers['Retry-After'] = seconds;
  const milliseconds = firstValue(upstreamHeaders['retry-after-ms']);
  if (milliseconds !== undefined && /^\d+(\.\d+)?$/.test(milliseconds)) headers['retry-after-ms'] = milliseconds;
  return headers;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return (Array.isArray(value) ? value[0] : value)?.trim();
}

interface ErrorDetails {
  message: string;
  param: string | null;
  /** The upstream's `error.code` when it is a string. */
  code?: string;
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
  const code = inner?.['code'];
  return {
    message: typeof message === 'string' ? truncate(message) : truncate(bodyText.trim()),
    param: typeof param === 'string' ? param : null,
    ...(typeof code === 'string' ? { code } : {}),
  };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function truncate(text: string): string {
  return text.length > maximumMessageLength ? `${text.slice(0, maximumMessageLength)}…` : text;
}
