import type { FastifyInstance } from 'fastify';
import type { OpenApiDocument } from '../openapi/document.ts';
import type { RegisteredRoute } from '../openapi/route-list.ts';

/** The version the document states (the gateway's API, not the package). */
const apiVersion = '1.0.0';

/**
 * `GET /openapi.json`, public: it describes routes and their shapes, no secrets or configuration.
 * Built once, on the first request, from every route registered by then; routes without a
 * description are listed under `x-undocumented-routes` and logged. The builder and the ~250 zod
 * schemas it describes the admin answers with are imported then too, not at start (ADR 0025).
 */
export function registerOpenApiRoute(app: FastifyInstance, routes: readonly RegisteredRoute[]): void {
  let document: OpenApiDocument | null = null;
  app.get('/openapi.json', async (request) => {
    if (document === null) {
      const { buildOpenApiDocument } = await import('../openapi/document.ts');
      document = buildOpenApiDocument(routes, apiVersion);
      const undocumented = document['x-undocumented-routes'];
      if (undocumented) request.log.warn({ routes: undocumented }, 'routes without an OpenAPI description');
    }
    return document;
  });
}
