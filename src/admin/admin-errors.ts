import type { FastifyInstance } from 'fastify';
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

/**
 * Registers a feature's admin routes in their own scope. When the feature is off every one of
 * them answers 503 `feature_unavailable` before its body is read, whatever was sent.
 */
export function registerFeatureRoutes(
  app: FastifyInstance,
  feature: { enabled: boolean; name: string; setting: string },
  routes: (scope: FastifyInstance) => void,
): void {
  void app.register(async (scope) => {
    if (!feature.enabled) scope.addHook('onRequest', (_request, _reply, done) => done(featureUnavailable(feature.name, feature.setting)));
    routes(scope);
  });
}
