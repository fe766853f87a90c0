import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import { type Authenticator, type Principal } from './auth.ts';
import { installErrorHandlers, installRequestHooks } from './hooks.ts';
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
  /** Null unless METRICS_ENABLED. */
  metrics: GatewayMetrics | null;
}

export function buildServer(dependencies: ServerDependencies): FastifyInstance {
  const { settings, catalog, authenticator, metrics } = dependencies;
  const app = Fastify({
    loggerInstance: dependencies.logger as FastifyBaseLogger,
    // One log line per request, written by the onResponse hook (or the stream relay).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit: settings.server.bodySizeLimit,
    genReqId: requestIdFor,
    // Requests that arrive while draining get the gateway's own 503 envelope (onRequest below).
    return503OnClosing: false,
  });
  // Set by the auth hook before any handler reads it.
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('userPath', '/');
  app.decorateRequest('logFields', null);
  registerBodyParsers(app);

  // The level is fixed at startup: skip building each request's log fields when nobody reads them.
  installRequestHooks(app, metrics, dependencies.logger.isLevelEnabled('info'));
  installErrorHandlers(app);

  registerHealthRoutes(app, catalog);
  if (metrics !== null) {
    app.get('/metrics', async (_request, reply) => reply.header('content-type', metrics.registry.contentType).send(await metrics.render()));
  }
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
