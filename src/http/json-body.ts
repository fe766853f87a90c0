import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors/gateway-error.ts';
import { assertJsonDepth } from '../core/json-depth.ts';
import { assertStoredFields } from './stored-fields.ts';

/**
 * Body parsing: JSON with the gateway's own error (code `invalid_json`), and every other
 * content type kept as raw bytes for the routes that want them. Bodies are bounded by the
 * server's `bodyLimit` (413) and JSON nesting by `maximumJsonDepth` (400 `body_too_deep`,
 * checked before parsing: deeper values break JSON.stringify and recursive code downstream).
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    done(null, body);
  });
}

/**
 * A JSON body from a route that accepts any content type (e.g. curl's default form type);
 * bytes parsed here get the stored-field bounds a JSON content type got in its hook.
 */
export function jsonBodyOf(body: unknown): unknown {
  if (!Buffer.isBuffer(body)) return body;
  const parsed = parseJsonBody(body.toString('utf8'));
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) assertStoredFields(parsed as Record<string, unknown>);
  return parsed;
}

function parseJsonBody(text: string): unknown {
  assertJsonDepth(text);
  try {
    return JSON.parse(text);
  } catch {
    throw invalidRequest('request body is not valid JSON', { code: 'invalid_json' });
  }
}
