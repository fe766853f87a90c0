import { invalidRequest, type GatewayError } from '../errors/gateway-error.ts';

/** 503 for an admin route whose feature is switched off (CONTRACT section 4). */
export function featureUnavailable(feature: string, setting: string): GatewayError {
  return invalidRequest(`${feature} is not available: ${setting} is off`, { status: 503, code: 'feature_unavailable' });
}

export function invalidParameter(param: string, message: string): GatewayError {
  return invalidRequest(message, { code: 'invalid_parameter', param });
}

/** A JSON object body, or a 400. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw invalidRequest('request body must be a JSON object', { code: 'invalid_body' });
  }
  return body as Record<string, unknown>;
}

export const isoTime = (epochMs: number | null): string | null => (epochMs === null ? null : new Date(epochMs).toISOString());
