import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors/gateway-error.ts';

/**
 * Body parsing: JSON with the gateway's own error (code `invalid_json`), and every other
 * content type kept as raw bytes for the routes that want them. Bodies are bounded by the
 * server's `bodyLimit` (413).
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(invalidRequest('request body is not valid JSON', { code: 'invalid_json' }), undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    done(null, body);
  });
}

/** A JSON body from a route that accepts any content type (e.g. curl's default form type). */
export function jsonBodyOf(body: unknown): unknown {
  if (!Buffer.isBuffer(body)) return body;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw invalidRequest('request body is not valid JSON', { code: 'invalid_json' });
  }
}
