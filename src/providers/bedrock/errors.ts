import { upstreamErrorOf } from '../upstream-body.ts';
import type { UpstreamResponse } from '../upstream-client.ts';

/**
 * Bedrock error types whose HTTP status would misplace them in the envelope's classes: a
 * model that timed out (408) or failed (424) is the provider's fault (504 / 502, so failover
 * and retries apply), an exceeded service quota is a rate limit (429). Other types keep
 * their status (ThrottlingException 429, ValidationException 400, AccessDeniedException 403,
 * ResourceNotFoundException 404, ServiceUnavailableException 503, ...).
 */
const remappedStatuses: Readonly<Record<string, number>> = {
  ModelTimeoutException: 504,
  ModelErrorException: 502,
  ModelNotReadyException: 429,
  ServiceQuotaExceededException: 429,
};

/** The error type of an `x-amzn-ErrorType` header (`ThrottlingException:http://internal...`). */
export function errorTypeOf(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return (value ?? '').split(':')[0]?.trim() ?? '';
}

/** The status an error answer is mapped with. */
export function bedrockErrorStatus(status: number, errorType: string): number {
  return remappedStatuses[errorType] ?? status;
}

/** A Bedrock error answer as the CONTRACT 4 envelope, AWS's `{"message"}` kept. */
export function bedrockErrorOf(response: UpstreamResponse, provider: string): Promise<Error> {
  const status = bedrockErrorStatus(response.statusCode, errorTypeOf(response.headers['x-amzn-errortype']));
  return upstreamErrorOf(status === response.statusCode ? response : { ...response, statusCode: status }, provider);
}
