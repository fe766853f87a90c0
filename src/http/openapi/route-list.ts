import type { FastifyInstance } from 'fastify';

/** One registered route: an HTTP method and Fastify's URL pattern (`/v1/files/:id`, `/v1/models/*`). */
export interface RegisteredRoute {
  method: string;
  url: string;
}

/** The methods an OpenAPI path item can hold; routes on other methods (Fastify's `all`) are not described. */
export const describableMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * Collects every route registered on `app` from now on (child scopes included), so that the
 * OpenAPI document can be checked against what the server really serves.
 */
export function collectRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  const routes: RegisteredRoute[] = [];
  app.addHook('onRoute', (options) => {
    const methods = Array.isArray(options.method) ? options.method : [options.method];
    for (const method of methods) routes.push({ method: method.toUpperCase(), url: options.url });
  });
  return routes;
}
