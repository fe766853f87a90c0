import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import { renderEnvelope, toGatewayError } from '../errors/envelope.ts';
import { notFound } from '../errors/gateway-error.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import { type Authenticator, type Principal } from './auth.ts';
import { registerBodyParsers } from './json-body.ts';
import { requestIdFor } from './request-id.ts';
import { registerChatRoutes } from './routes/chat-completions.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerModelRoutes } from './routes/models.ts';
import { resolveUserPath } from './user-path.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
    userPath: string;
    /** Extra fields for the request's completion log line (provider, model). */
    logFields: Record<string, unknown> | null;
  }
}

export interface ServerDependencies {
  settings: Settings;
  logger: Logger;
  catalog: ModelCatalog;
  authenticator: Authenticator;
}

export function buildServer(dependencies: ServerDependencies): FastifyInstance {
  const { settings, catalog, authenticator } = dependencies;
  const app = Fastify({
    loggerInstance: dependencies.logger as FastifyBaseLogger,
    // One log line per request, written by the onResponse hook (or the stream relay).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit: settings.server.bodySizeLimit,
    genReqId: requestIdFor,
    return503OnClosing: true,
  });
  // Set by the auth hook before any handler reads it.
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('userPath', '/');
  app.decorateRequest('logFields', null);
  registerBodyParsers(app);

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const fields = {
      ...request.logFields,
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime),
    };
    request.log.info(fields, 'request completed');
    done();
  });
  app.setErrorHandler((error, request, reply) => {
    const gatewayError = toGatewayError(error);
    if (gatewayError.status >= 500 && gatewayError.type === 'internal_error') request.log.error({ err: error }, 'unhandled error');
    else request.log.debug({ code: gatewayError.code, status: gatewayError.status }, gatewayError.message);
    return reply.code(gatewayError.status).headers(gatewayError.headers).send(renderEnvelope(gatewayError));
  });
  app.setNotFoundHandler((request, reply) => {
    const error = notFound(`unknown route: ${request.method} ${request.url.split('?')[0]}`, { code: 'unknown_route' });
    return reply.code(404).send(renderEnvelope(error));
  });

  registerHealthRoutes(app, catalog);
  const userPathHeader = settings.server.userPathHeader;
  void app.register(async (v1) => {
    v1.addHook('onRequest', (request, _reply, done) => {
      try {
        const principal = authenticator.authenticate(request.headers);
        request.principal = principal;
        request.userPath = resolveUserPath(principal.boundUserPath, request.headers[userPathHeader]);
        done();
      } catch (error) {
        done(error as Error);
      }
    });
    registerModelRoutes(v1, catalog);
    registerChatRoutes(v1, { catalog });
  });
  return app;
}
