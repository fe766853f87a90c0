// First: sets V8's heap flags before the rest of the gateway loads (ADR 0025).
import { heapPolicyAfterStart } from './lifecycle/heap-policy.ts';
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { ClusterWorker, WorkerState } from './cluster/worker.ts';
import { startServices } from './core/service.ts';
import { ConfigError } from './errors/config-error.ts';
import { loadProcessSettings } from './config/load.ts';
import type { LoadedSettings, Settings } from './config/settings.ts';
import { Authenticator } from './auth/authenticator.ts';
import { isLoopbackHost } from './core/loopback.ts';
import type { JwtVerifier } from './auth/jwt/jwt-verifier.ts';
import { buildServer } from './http/server.ts';
import { LogDestination } from './lifecycle/log-destination.ts';
import { RunningHandlers } from './http/running-handlers.ts';
import { installShutdown, type ShutdownOptions } from './lifecycle/shutdown.ts';
import type { GatewayMetrics } from './observability/metrics.ts';
import { startTracing } from './observability/tracing.ts';
import { redactLogLine } from './observability/redact-url.ts';
import { createAdapters } from './providers/registry.ts';
import type { ProviderAdapter } from './providers/provider.ts';
import { UpstreamClient } from './providers/upstream-client.ts';
import { CircuitBreakers } from './routing/circuit-breaker.ts';
import { InFlightCounter } from './routing/in-flight.ts';
import { ModelCatalog } from './routing/model-catalog.ts';
import { buildStatefulServices, serviceList, type GatewayService } from './services.ts';
import { ConfigReloader } from './lifecycle/config-reload.ts';
import { StoredGuardrails } from './guardrails/stored-guardrails.ts';
import type { GuardrailStore } from './guardrails/guardrail-store.ts';

const initialListingWaitMs = 5_000;

/** Composition root: configuration, stores, providers, the one list of services, server, signals. */
async function main(): Promise<void> {
  const { settings, warnings } = readSettings();
  const logDestination = new LogDestination();
  const logger = createLogger(settings, logDestination);
  for (const warning of warnings) logger.warn(warning);
  const worker = await clusterRole(settings, logger, logDestination);
  if (worker === 'primary') return;

  const client = createUpstreamClient(settings);
  const adapters = createAdapters(settings.providers, client);
  const catalog = createCatalog(settings, adapters, logger);
  const stateful = await buildStatefulServices(settings, logger);
  const metrics = settings.metrics.enabled ? await createMetrics() : null;
  const providerTypes = new Map<string, string>(settings.providers.map((provider) => [provider.name, provider.type]));
  const tracer = await startTracing(settings.tracing, providerTypes); // updated in place by a reload
  const breakers = createBreakers(settings);
  const guardrails = createGuardrails(settings, stateful.storage.guardrails, logger, metrics, adapters);
  const providers = { catalog, client, breakers, providerTypes };
  const services = serviceList(settings, logger, stateful, { tracer, client, providers, guardrails, initialListingWaitMs });
  await startServices(services);
  const authenticator = new Authenticator(settings.server.masterKey, stateful.apiKeys, await createJwtVerifier(settings, logger));
  reportAccess(authenticator, settings, logger);

  const runningHandlers = new RunningHandlers();
  const sharedCounters = stateful.rateLimitCounters;
  if (sharedCounters !== null) metrics?.watchRateLimitStore(() => sharedCounters.status());
  const reloader = createReloader(settings, logger, services);
  const app = buildServer({
    settings,
    logger,
    catalog,
    authenticator,
    metrics,
    storage: stateful.storage,
    apiKeys: stateful.apiKeys,
    metering: stateful.metering,
    budgets: stateful.budgets,
    limiter: stateful.limiter,
    rateLimitStore: sharedCounters,
    virtualModels: stateful.virtualModels,
    failoverRules: stateful.failoverRules,
    guardrails,
    breakers,
    inFlight: new InFlightCounter(),
    cache: stateful.cache,
    prices: stateful.prices,
    usageEnabled: stateful.recorder !== null,
    mcp: stateful.mcp,
    responses: stateful.responses,
    runningHandlers,
    requestLog: stateful.requestLog,
    tracer,
    reloader,
  });
  await listen(app, settings, logger, worker, { services, reloadConfiguration: () => reloader.reload(), metrics });
  const timeoutMs = settings.server.shutdownTimeoutSeconds * 1000;
  installShutdown({ app, logger, timeoutMs, services, ...shutdownWaits(client, runningHandlers, logDestination) });
}

/** What shutdown waits for or cuts: running handlers, upstream calls at the deadline, the log. */
function shutdownWaits(
  client: UpstreamClient,
  runningHandlers: RunningHandlers,
  logDestination: LogDestination,
): Pick<ShutdownOptions, 'handlersIdle' | 'cutUpstreamCalls' | 'flushLogs'> {
  return {
    handlersIdle: (timeoutMs) => runningHandlers.idle(timeoutMs),
    cutUpstreamCalls: (error) => client.cutAll(error),
    flushLogs: (timeoutMs) => logDestination.waitUntilWritten(timeoutMs),
  };
}

/**
 * One line naming what is open and what is closed; open mode on a non-loopback address stops
 * the start unless ALLOW_OPEN_NETWORK=true (ADR 30). Managed keys already in the store close it.
 */
function reportAccess(authenticator: Authenticator, settings: Settings, logger: Logger): void {
  const access = authenticator.describeAccess();
  const host = settings.server.host;
  if (access.open && !isLoopbackHost(host) && !settings.server.allowOpenNetwork) {
    throw new Error(
      `refusing to listen on ${host} in open mode (no MASTER_KEY, JWT issuer or API key): set MASTER_KEY, or HOST=127.0.0.1, or ALLOW_OPEN_NETWORK=true to serve anyone who reaches ${host} with a loopback Host header`,
    );
  }
  if (access.open || settings.server.masterKey === null) logger.warn({ host }, access.message);
  else logger.info({ host }, access.message);
}

/** Hot reload (SIGHUP, POST /admin/reload) over the one list of services. */
function createReloader(settings: Settings, logger: Logger, services: readonly GatewayService[]): ConfigReloader {
  const reloader = new ConfigReloader({ read: loadProcessSettings, settings, logger, services });
  process.on('SIGHUP', () => void reloader.reloadLogged());
  return reloader;
}

/** YAML and stored guardrails, re-read like the other stored definitions (replicas); started with the list. */
function createGuardrails(
  settings: Settings,
  store: GuardrailStore,
  logger: Logger,
  metrics: GatewayMetrics | null,
  adapters: ProviderAdapter[],
): StoredGuardrails {
  return new StoredGuardrails({
    store,
    configGuardrails: settings.guardrails,
    logger,
    metrics,
    instances: new Map(adapters.map((adapter) => [adapter.name, adapter])),
    reloadIntervalMs: settings.reloadIntervalMs,
  });
}

/** WORKERS > 1 (src/cluster/): this process runs the cluster as its primary, or joins it as a worker. */
async function clusterRole(settings: Settings, logger: Logger, logDestination: LogDestination): Promise<ClusterWorker | 'primary' | null> {
  if (settings.server.workers <= 1) return null;
  const clustering = await import('./cluster/cluster-mode.ts');
  if (!clustering.isPrimary()) return clustering.joinCluster(logger);
  heapPolicyAfterStart();
  await clustering.runPrimary({ settings, logger, flushLogs: (timeoutMs) => logDestination.waitUntilWritten(timeoutMs) });
  return 'primary';
}

/** Listens; a cluster worker installs its hooks first, and reports to the primary (which logs once all listen). */
async function listen(
  app: FastifyInstance,
  settings: Settings,
  logger: Logger,
  worker: ClusterWorker | null,
  state: WorkerState,
): Promise<void> {
  worker?.install(app, state);
  await app.listen({ host: settings.server.host, port: settings.server.port });
  heapPolicyAfterStart();
  if (worker === null) logListening(app, settings, logger);
  else await worker.listening(app);
}

function createBreakers(settings: Settings): CircuitBreakers {
  return new CircuitBreakers({
    failureThreshold: settings.upstream.circuitBreakerFailures,
    openMs: settings.upstream.circuitBreakerOpenSeconds * 1000,
  });
}

function createCatalog(settings: Settings, adapters: ProviderAdapter[], logger: Logger): ModelCatalog {
  return new ModelCatalog(adapters, {
    refreshIntervalMs: settings.models.refreshIntervalSeconds * 1000,
    recheckIntervalMs: settings.models.recheckIntervalSeconds * 1000,
    configured: new Map(settings.providers.flatMap((provider) => (provider.models ? [[provider.name, provider.models] as const] : []))),
    logger,
    disabled: settings.disabledProviders,
  });
}

/** jose is loaded only when a JWT issuer is configured. */
async function createJwtVerifier(settings: Settings, logger: Logger): Promise<JwtVerifier | null> {
  if (settings.auth.jwt.issuers.length === 0) return null;
  const { JwtVerifier: Verifier } = await import('./auth/jwt/jwt-verifier.ts');
  return new Verifier(settings.auth.jwt, logger);
}

/** prom-client is loaded only with METRICS_ENABLED. */
async function createMetrics(): Promise<GatewayMetrics> {
  const { GatewayMetrics: Metrics } = await import('./observability/metrics.ts');
  return new Metrics();
}

function createUpstreamClient(settings: Settings): UpstreamClient {
  return new UpstreamClient({
    timeoutMs: settings.upstream.timeoutSeconds * 1000,
    connectTimeoutMs: settings.upstream.connectTimeoutSeconds * 1000,
    connections: settings.upstream.maxConnections,
    maxResponseBytes: settings.upstream.maxResponseBytes,
  });
}

/** The line the operator (and the e2e tests) wait for: the bound address and the providers. */
function logListening(app: FastifyInstance, settings: Settings, logger: Logger): void {
  logger.info(
    {
      address: app.server.address(),
      config_file: settings.configFile,
      providers: settings.providers.map((provider) => ({ name: provider.name, type: provider.type, base_url: provider.baseUrl })),
    },
    'model gateway listening',
  );
}

function readSettings(): LoadedSettings {
  try {
    return loadProcessSettings();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

function createLogger(settings: Settings, destination: LogDestination): Logger {
  return pino(
    {
      level: settings.logging.level,
      base: { service: 'model-gateway' },
      redact: {
        paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.api_key', '*.apiKey', '*.master_key', '*.masterKey'],
        censor: '[redacted]',
      },
      // Secrets in query strings (`?api_key=...`), wherever a URL lands in a line.
      hooks: { streamWrite: redactLogLine },
    },
    destination,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`model gateway failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
