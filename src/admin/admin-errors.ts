import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import type { ErrorCode } from '../errors/codes.ts';
import { invalidRequest, type GatewayError } from '../errors/gateway-error.ts';

/** 503 for an admin route whose feature is switched off (CONTRACT section 4). */
export function featureUnavailable(feature: string, setting: string): GatewayError {
  return invalidRequest(`${feature} is not available: ${setting} is off`, { status: 503, code: 'feature_unavailable' });
}

export function invalidParameter(param: string, message: string): GatewayError {
  return invalidRequest(message, { code: 'invalid_parameter', param });
}

/** A query parameter's text: undefined when absent or empty, a 400 naming it when repeated. */
export function queryText(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw invalidParameter(name, `\`${name}\` must be given once`);
  return value;
}

/** A JSON object body, or a 400. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw invalidRequest('request body must be a JSON object', { code: 'invalid_body' });
  }
  return body as Record<string, unknown>;
}

/**
 * A JSON object body parsed with its schema (src/admin/schemas/bodies.ts). The first issue is
 * a 400 whose `param` is the field it concerns (the innermost named one: `period` of
 * `limit_key.period`, `allowed_models` of `allowed_models[3]`) and whose message the schema
 * gives; `codes` names fields refused with another code than `invalid_parameter`.
 */
export function parseBody<Schema extends z.ZodType>(
  schema: Schema,
  body: unknown,
  codes: Readonly<Partial<Record<string, ErrorCode>>> = {},
): z.output<Schema> {
  const result = schema.safeParse(objectBody(body));
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue?.path.filter((segment): segment is string => typeof segment === 'string').at(-1) ?? null;
  const code = (param === null ? undefined : codes[param]) ?? 'invalid_parameter';
  throw invalidRequest(issue?.message ?? 'invalid request body', { code, param });
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
