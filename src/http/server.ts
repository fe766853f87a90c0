import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  type onRequestHookHandler,
} from 'fastify';
import type { ServerOptions } from 'node:http';
import type { Logger } from 'pino';
import { lazySchemaCompilers } from './schema-compilers.ts';
import { registerApiKeyRoutes } from '../admin/api-keys-routes.ts';
import { registerAuditRoutes } from '../admin/audit-routes.ts';
import { registerWhoamiRoute } from '../admin/whoami-route.ts';
import { installAdminAudit } from '../audit/admin-audit.ts';
import { registerBudgetRoutes } from '../admin/budgets-routes.ts';
import { registerRateLimitRoutes } from '../admin/rate-limits-routes.ts';
import { registerUsageRoutes } from '../admin/usage-routes.ts';
import { registerAdminModelRoutes } from '../admin/models-routes.ts';
import { registerVirtualModelRoutes } from '../admin/virtual-models-routes.ts';
import { registerFailoverRuleRoutes } from '../admin/failover-rules-routes.ts';
import { registerMcpServerRoutes } from '../admin/mcp-servers-routes.ts';
import { registerMcpVirtualServerRoutes } from '../admin/mcp-virtual-servers-routes.ts';
import type { McpGateway } from '../mcp/mcp-gateway.ts';
import type { ResponseCache } from '../cache/response-cache-service.ts';
import type { CircuitBreakers } from '../routing/circuit-breaker.ts';
import type { InFlightCounter } from '../routing/in-flight.ts';
import type { VirtualModels } from '../routing/virtual-models.ts';
import type { FailoverRules } from '../routing/failover-rules.ts';
import type { BudgetService } from '../budgets/budget-service.ts';
import type { Settings } from '../config/settings.ts';
import type { ApiKeyService } from '../auth/api-keys/api-key-service.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { RateLimiter } from '../ratelimit/rate-limiter.ts';
import type { ResponseState } from '../responses/response-state.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import type { Storage } from '../storage/storage.ts';
import type { Metering } from '../usage/metering.ts';
import type { RunningHandlers } from './running-handlers.ts';
import type { PriceBook } from '../usage/pricing.ts';
import { withGoogleQueryKey } from './google-query-key.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import type { Principal } from '../auth/principal.ts';
import { assertEndpointAllowed } from '../auth/allowlist.ts';
import { clientErrorHandler } from './client-errors.ts';
import { installErrorHandlers, installRequestHooks } from './hooks.ts';
import { registerBodyParsers } from './json-body.ts';
import { requestIdFor } from './request-id.ts';
import { registerAudioRoutes } from './routes/audio.ts';
import { registerBatchRoutes } from './routes/batches.ts';
import { registerChatRoutes } from './routes/chat-completions.ts';
import { registerCompletionRoutes } from './routes/completions.ts';
import { registerDashboardRoutes } from './routes/dashboard.ts';
import { registerEmbeddingsRoutes } from './routes/embeddings.ts';
import { registerFileRoutes } from './routes/files.ts';
import { registerOwnedResourceRoutes } from './routes/owned-relay.ts';
import { registerHealthRoutes, type RateLimitStoreHealth } from './routes/health.ts';
import { registerImageRoutes } from './routes/images.ts';
import { registerMessagesRoutes } from './routes/messages.ts';
import { registerMessageBatchRoutes } from './routes/anthropic-resources.ts';
import { registerGeminiRoutes } from './routes/gemini.ts';
import { registerGeminiResourceRoutes } from './routes/gemini-resources.ts';
import { registerModelRoutes } from './routes/models.ts';
import { registerMcpRoutes } from './routes/mcp.ts';
import { registerPassthroughRoutes } from './routes/passthrough.ts';
import { registerStoredFieldBounds } from './stored-fields.ts';
import { registerRealtimeRelay } from './routes/realtime.ts';
import { registerResponsesRoutes } from './routes/responses.ts';
import { registerSelfUsageRoute } from './routes/usage.ts';
import { resolveUserPath } from '../auth/user-path-header.ts';
import type { RequestLogRecorder } from '../request-log/request-log-recorder.ts';
import { installRequestLog } from '../request-log/request-log-hooks.ts';
import { entryObserver } from '../observability/entry-observer.ts';
import type { RequestTracer } from '../observability/tracing.ts';
import { registerRequestLogRoutes } from '../admin/requests-routes.ts';
import { collectRoutes } from './openapi/route-list.ts';
import { registerOpenApiRoute } from './routes/openapi.ts';
import { registerReloadRoute, type Reloader } from '../admin/reload-route.ts';
import type { StoredGuardrails } from '../guardrails/stored-guardrails.ts';
import { registerGuardrailRoutes } from '../admin/guardrails-routes.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
    userPath: string;
    /** `performance.now()` at arrival. */
    startedAt: number;
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
  storage: Storage;
  apiKeys: ApiKeyService;
  metering: Metering;
  /** Null when budgets (or usage) are off. */
  budgets: BudgetService | null;
  /** Null when rate limits are off. */
  limiter: RateLimiter | null;
  /** The shared rate-limit counter store (RATE_LIMITS_STORE=redis), reported by /health/ready. */
  rateLimitStore?: RateLimitStoreHealth | null;
  /** Whether usage records are kept (USAGE_ENABLED). */
  usageEnabled: boolean;
  virtualModels: VirtualModels;
  /** Failover rules for direct requests; none when absent. */
  failoverRules?: FailoverRules | null;
  /** Configured and stored guardrails (`/admin/guardrails`); absent: none, and no admin routes for them. */
  guardrails?: StoredGuardrails | null;
  breakers: CircuitBreakers;
  inFlight: InFlightCounter;
  /** Null unless RESPONSE_CACHE_ENABLED. */
  cache: ResponseCache | null;
  prices: PriceBook;
  /** Null when MCP_ENABLED is off. */
  mcp: McpGateway | null;
  /** Stored Responses API state; absent: `/v1/responses` keeps nothing. */
  responses?: ResponseState | null;
  /** Counts running handlers, so that shutdown can wait for cut streams to report. */
  runningHandlers?: RunningHandlers;
  /** Null when REQUEST_LOG_ENABLED is off. */
  requestLog?: RequestLogRecorder | null;
  /** Null unless an OTLP endpoint is configured (src/observability/tracing.ts). */
  tracer?: RequestTracer | null;
  /** Hot reload of the configuration file (POST /admin/reload); absent: no such route. */
  reloader?: Reloader | null;
}

export function buildServer(dependencies: ServerDependencies): FastifyInstance {
  const { settings, catalog, metrics, storage } = dependencies;
  const app = Fastify({
    loggerInstance: dependencies.logger as FastifyBaseLogger,
    // One log line per request, written by the onResponse hook (streams included).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit: settings.server.bodySizeLimit,
    genReqId: requestIdFor,
    // No child logger per request (a measurable cost on the hot path): the few log calls
    // of a request name its request_id themselves.
    childLoggerFactory: (logger) => logger,
    // Requests that arrive while draining get the gateway's own 503 envelope (hooks.ts).
    return503OnClosing: false,
    ...requestTimeouts(settings),
    // Parser errors and timeouts (no request yet) answer the envelope too.
    clientErrorHandler: clientErrorHandler(dependencies.logger as FastifyBaseLogger),
    // No route declares a fastify schema: ajv and fast-json-stringify load only if one does.
    schemaController: { compilersFactory: lazySchemaCompilers() },
  });
  dependencies.runningHandlers?.install(app);
  // Set by the hooks before any handler reads them.
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('userPath', '/');
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('logFields', null);
  registerBodyParsers(app);
  // The level is fixed at startup: skip building each request's log fields when nobody reads them.
  installRequestHooks(app, metrics, dependencies.logger.isLevelEnabled('info'));
  // An upload answered 413 early is read away (up to 4x the limit, 30 s at most) before the socket closes.
  installErrorHandlers(app, { maxBytes: 4 * settings.server.bodySizeLimit, maxMs: 30_000 });
  // Open mode answers only a loopback Host, on every route (DNS rebinding, ADR 30).
  app.addHook(
    'onRequest',
    guard((request) => dependencies.authenticator.assertHostServed(request.headers)),
  );

  // Every route registered from here on is described by GET /openapi.json (checked by its test).
  registerOpenApiRoute(app, collectRoutes(app));
  registerHealthRoutes(app, catalog, storage, dependencies.cache, dependencies.rateLimitStore ?? null);
  // Open until the first credential exists (an API key created in open mode closes it).
  registerDashboardRoutes(app, undefined, () => dependencies.authenticator.openMode);
  if (metrics !== null) {
    // METRICS_AUTH: the credentials /admin GET takes (master key, admin or viewer key); else public.
    const onRequest = settings.metrics.auth
      ? guard((request) => {
          request.principal = dependencies.authenticator.authenticateAdmin(request.headers, 'GET');
        })
      : [];
    app.get('/metrics', { onRequest }, async (_request, reply) =>
      reply.header('content-type', metrics.registry.contentType).send(await metrics.render()),
    );
  }
  void app.register(async (v1) => registerModelApi(v1, dependencies));
  void app.register(async (admin) => registerAdminApi(admin, dependencies));
  return app;
}

/** The request log, traces and model metrics read one entry per request (nothing when all are off). */
function installRequestObservers(v1: FastifyInstance, dependencies: ServerDependencies): void {
  const { settings } = dependencies;
  const requestLog = dependencies.requestLog ?? null;
  const observe = entryObserver(dependencies.tracer ?? null, dependencies.metrics);
  if (requestLog === null && observe === null) return;
  const bodies = requestLog === null ? 'off' : settings.requestLog.bodies;
  const traced = (dependencies.tracer ?? null) !== null;
  installRequestLog(v1, { recorder: requestLog, bodies, maxBytes: settings.requestLog.bodyMaxBytes, traced, observe });
}

function registerModelApi(v1: FastifyInstance, dependencies: ServerDependencies): void {
  const { authenticator, settings } = dependencies;
  const userPathHeader = settings.server.userPathHeader;
  // Before authentication, so that refused requests are logged too.
  installRequestObservers(v1, dependencies);
  v1.addHook(
    'onRequest',
    guard((request, done) => {
      const principal = authenticator.authenticateRequest(withGoogleQueryKey(request.headers, request.url));
      const admit = (admitted: Principal): void => {
        request.principal = admitted;
        assertEndpointAllowed(admitted, request.method, request.url);
        request.userPath = resolveUserPath(admitted.boundUserPath, request.headers[userPathHeader]);
      };
      if (!(principal instanceof Promise)) return admit(principal);
      // A JWT seen for the first time: verified once (JWKS), then answered from the verdict cache.
      principal.then(admit).then(
        () => done(),
        (error: unknown) => done(error as Error),
      );
      return 'async';
    }),
  );
  registerStoredFieldBounds(v1);
  registerModelRoutes(v1, dependencies.catalog, dependencies.virtualModels);
  const { catalog, metering, budgets, limiter, virtualModels, breakers, inFlight, cache } = dependencies;
  const { retries, retryBaseDelayMs } = settings.upstream;
  // Every model endpoint shares one pipeline: routing, limits, budgets, failover, metering.
  const failoverRules = dependencies.failoverRules ?? null;
  const pipeline = {
    catalog,
    metering,
    budgets,
    limiter,
    virtualModels,
    failoverRules,
    breakers,
    inFlight,
    cache,
    retries,
    retryBaseDelayMs,
    guardrails: dependencies.guardrails?.pipeline ?? null,
  };
  registerChatRoutes(v1, pipeline, dependencies.storage.ownership);
  registerEmbeddingsRoutes(v1, pipeline);
  registerResponsesRoutes(v1, pipeline, dependencies.responses ?? null, dependencies.storage.ownership);
  registerMessagesRoutes(v1, pipeline, dependencies.storage.ownership);
  registerMessageBatchRoutes(v1, pipeline, dependencies.storage.ownership);
  registerGeminiRoutes(v1, pipeline, dependencies.virtualModels, dependencies.storage.ownership);
  registerGeminiResourceRoutes(v1, pipeline, dependencies.storage.ownership);
  // Relay endpoints: audio, files, batches, passthrough and the realtime WebSocket.
  registerAudioRoutes(v1, pipeline);
  // Legacy completions, moderations and images: relayed to OpenAI-wire instances, routed by model.
  registerCompletionRoutes(v1, pipeline);
  registerImageRoutes(v1, pipeline);
  registerFileRoutes(v1, catalog, dependencies.storage.ownership);
  registerBatchRoutes(v1, pipeline, dependencies.storage.ownership);
  // Assistants, threads, vector stores, conversations ...: one catalogue, one owned relay.
  registerOwnedResourceRoutes(v1, { catalog, ownership: dependencies.storage.ownership, virtualModels, metering, limiter, budgets });
  const owners = { store: dependencies.storage.ownership, state: dependencies.responses ?? null };
  registerPassthroughRoutes(v1, { catalog, metering, budgets, limiter, userPathHeader, owners, virtualModels });
  // The upgrade is answered at once by a healthy upstream: three connect timeouts at most.
  const handshakeTimeoutMs = Math.min(settings.upstream.timeoutSeconds, 3 * settings.upstream.connectTimeoutSeconds) * 1000;
  registerRealtimeRelay(v1, { ...pipeline, authenticator, userPathHeader, handshakeTimeoutMs, logger: dependencies.logger });
  registerSelfUsageRoute(v1, dependencies.usageEnabled ? dependencies.storage.usage : null, budgets, limiter);
  registerMcpRoutes(v1, { mcp: dependencies.mcp, limiter, budgets });
}

function registerAdminApi(admin: FastifyInstance, dependencies: ServerDependencies): void {
  admin.addHook(
    'onRequest',
    guard((request) => {
      request.principal = dependencies.authenticator.authenticateAdmin(request.headers, request.method);
    }),
  );
  installAdminAudit(admin, { store: dependencies.storage.audit, logger: dependencies.logger });
  registerAuditRoutes(admin, dependencies.storage.audit);
  registerWhoamiRoute(admin);
  registerApiKeyRoutes(admin, dependencies.apiKeys, dependencies.requestLog ? dependencies.storage.requestLog : null);
  registerBudgetRoutes(admin, dependencies.budgets);
  registerUsageRoutes(admin, dependencies.usageEnabled ? dependencies.storage.usage : null);
  registerRequestLogRoutes(admin, dependencies.requestLog ? dependencies.storage.requestLog : null, dependencies.apiKeys);
  registerRateLimitRoutes(admin, dependencies.limiter);
  // The instances of now: a hot reload may add or remove providers.
  registerVirtualModelRoutes(admin, dependencies.virtualModels, () => [...dependencies.catalog.instances.keys()]);
  if (dependencies.failoverRules) registerFailoverRuleRoutes(admin, dependencies.failoverRules);
  if (dependencies.guardrails) registerGuardrailRoutes(admin, dependencies.guardrails);
  registerAdminModelRoutes(admin, dependencies);
  registerMcpServerRoutes(admin, dependencies.mcp);
  registerMcpVirtualServerRoutes(admin, dependencies.mcp);
  if (dependencies.reloader) registerReloadRoute(admin, dependencies.reloader);
}

/**
 * Bounds on receiving a request (slow clients, slowloris): its headers within HEADERS_TIMEOUT_SECONDS,
 * all of it within BODY_TIMEOUT_SECONDS, else 408 (client-errors.ts). Node stops counting once the
 * request has arrived, so long answers (SSE streams) and WebSocket upgrades are not cut. Node checks
 * the bounds periodically: a quarter of the headers timeout, between 250 ms and 5 s.
 */
function requestTimeouts(settings: Settings): { requestTimeout: number; http: ServerOptions } {
  const headersTimeout = settings.server.headersTimeoutSeconds * 1000;
  const requestTimeout = settings.server.bodyTimeoutSeconds * 1000;
  const connectionsCheckingInterval = Math.min(5000, Math.max(250, Math.floor(headersTimeout / 4)));
  return { requestTimeout, http: { headersTimeout, requestTimeout, connectionsCheckingInterval } };
}

/** An onRequest check whose exceptions become the request's error; one that answers `'async'` calls `done` itself. */
function guard(check: (request: FastifyRequest, done: (error?: Error) => void) => void | 'async'): onRequestHookHandler {
  return (request, _reply, done) => {
    try {
      if (check(request, done) !== 'async') done();
    } catch (error) {
      done(error as Error);
    }
  };
}
