import { mapUpstreamError } from '../upstream-errors.ts';
import { readBody } from '../upstream-body.ts';
import type { UpstreamResponse } from '../upstream-client.ts';
import { isRecord } from './wire.ts';

/** Reasons in Google's `error.details[].reason` that mean bad credentials, though the status is 400. */
const credentialReasons = new Set(['API_KEY_INVALID', 'API_KEY_SERVICE_BLOCKED']);

/**
 * The HTTP status to map a Google error answer (`{"error": {code, message, status, details}}`)
 * by: its own, except that an invalid API key (Google answers 400 INVALID_ARGUMENT with
 * reason API_KEY_INVALID) counts as 401, so the client sees an authentication_error.
 */
export function googleErrorStatus(status: number, bodyText: string): number {
  if (status !== 400) return status;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return status;
  }
  const error = isRecord(parsed) && isRecord(parsed['error']) ? parsed['error'] : {};
  const details = Array.isArray(error['details']) ? error['details'] : [];
  const reasons = details.map((detail: unknown) => (isRecord(detail) ? detail['reason'] : undefined));
  return reasons.some((reason) => typeof reason === 'string' && credentialReasons.has(reason)) ? 401 : status;
}

/** A non-2xx Google answer as the CONTRACT 4 GatewayError, Google's message kept. */
export async function googleErrorOf(response: UpstreamResponse, provider: string, signal: AbortSignal): Promise<Error> {
  let bodyText = '';
  try {
    bodyText = await readBody(response, provider, signal);
  } catch {
    // A broken error body still leaves the status to report.
  }
  return mapUpstreamError(googleErrorStatus(response.statusCode, bodyText), bodyText, provider, response.headers);
}
