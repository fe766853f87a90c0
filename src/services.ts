import type { Logger } from 'pino';
import { BudgetService } from './budgets/budget-service.ts';
import { RedisBudgetStore } from './budgets/redis-budget-store.ts';
import { MemoryCacheStore } from './cache/memory-cache-store.ts';
import { createRedisCacheStore } from './cache/redis-cache-store.ts';
import { ResponseCache } from './cache/response-cache-service.ts';
import { mcpSessionIdPrefix } from './cluster/mcp-forward.ts';
import type { Settings } from './config/settings.ts';
import type { Service } from './core/service.ts';
import type { StoredGuardrails } from './guardrails/stored-guardrails.ts';
import { ApiKeyService } from './auth/api-keys/api-key-service.ts';
import { providerService, type ProviderRuntime } from './lifecycle/provider-reload.ts';
import { McpGateway } from './mcp/mcp-gateway.ts';
import { canonicalMcpName } from './mcp/mcp-names.ts';
import type { RequestTracer } from './observability/tracing.ts';
import type { UpstreamClient } from './providers/upstream-client.ts';
import type { RateLimiter } from './ratelimit/rate-limiter.ts';
import { startRateLimiting, type RateLimiting } from './ratelimit/rate-limiting.ts';
import { connectRedisForCounters } from './ratelimit/redis-counter-store.ts';
import type { ResilientCounterStore } from './ratelimit/resilient-counter-store.ts';
import { ResponseState } from './responses/response-state.ts';
import { VirtualModels } from './routing/virtual-models.ts';
import { FailoverRules } from './routing/failover-rules.ts';
import { openStorage } from './storage/open-storage.ts';
import type { Storage } from './storage/storage.ts';
import { Metering } from './usage/metering.ts';
import { PriceBook } from './usage/pricing.ts';
import { UsageRecorder } from './usage/usage-recorder.ts';
import { RequestLogRecorder } from './request-log/request-log-recorder.ts';
import { RetentionSweep } from './request-log/retention-sweep.ts';

/** A service of this gateway: hot reload hands it the whole settings. */
export type GatewayService = Service<Settings>;

export interface StatefulServices {
  storage: Storage;
  recorder: UsageRecorder | null;
  /** Null when REQUEST_LOG_ENABLED is off. */
  requestLog: RequestLogRecorder | null;
  budgets: BudgetService | null;
  /** Null when RATE_LIMITS_ENABLED is off. */
  limiter: RateLimiter | null;
  /** The shared counter store behind the limiter; null unless RATE_LIMITS_STORE=redis. */
  rateLimitCounters: ResilientCounterStore | null;
  apiKeys: ApiKeyService;
  metering: Metering;
  prices: PriceBook;
  virtualModels: VirtualModels;
  failoverRules: FailoverRules;
  /** Null unless RESPONSE_CACHE_ENABLED. */
  cache: ResponseCache | null;
  /** Null unless MCP_ENABLED (the default). */
  mcp: McpGateway | null;
  /** Stored Responses API state (responses created through the chat translation). */
  responses: ResponseState;
  /** Null when RATE_LIMITS_ENABLED is off. */
  rateLimiting: RateLimiting | null;
  /** Null when REQUEST_LOG_ENABLED is off. */
  retentionSweep: RetentionSweep | null;
}

/** What main builds besides the stateful services: they join the one list too. */
export interface RuntimeServices {
  tracer: RequestTracer | null;
  client: UpstreamClient;
  providers: ProviderRuntime;
  guardrails: StoredGuardrails;
  /** How long the start waits for the first model listings. */
  initialListingWaitMs: number;
}

/** How often expired stored responses are swept. */
const responsesSweepIntervalMs = 10 * 60_000;

/**
 * Opens the database and builds the services that keep state in it; `serviceList` starts them.
 * (Rate limiting and MCP start as they are built: the limiter's rules and the MCP catalogs.)
 */
export async function buildStatefulServices(settings: Settings, logger: Logger): Promise<StatefulServices> {
  const storage = await openStorage(settings.storage);
  logger.info({ storage: storage.kind }, 'storage ready');
  const { flushIntervalMs, batchSize } = settings.usage;
  const recorder = settings.usage.enabled ? new UsageRecorder({ store: storage.usage, flushIntervalMs, batchSize, logger }) : null;
  // The request log batches like usage records.
  const requestLog = settings.requestLog.enabled
    ? new RequestLogRecorder({ store: storage.requestLog, flushIntervalMs, batchSize, logger })
    : null;
  const budgets = await createBudgets(settings, storage, recorder, logger);
  const apiKeys = new ApiKeyService({ store: storage.apiKeys, refreshIntervalMs: settings.reloadIntervalMs, logger });
  const usageEnabled = recorder !== null;
  const rateLimiting = await startRateLimiting({ settings, ruleStore: storage.rateLimitRules, usageEnabled, logger });
  const limiter = rateLimiting?.limiter ?? null;
  const prices = new PriceBook(new Map(Object.entries(settings.pricing)));
  const stored = { logger, reloadIntervalMs: settings.reloadIntervalMs };
  return {
    storage,
    recorder,
    requestLog,
    budgets,
    limiter,
    rateLimitCounters: rateLimiting?.sharedCounters ?? null,
    apiKeys,
    metering: new Metering({ recorder, budgets, limiter, prices }),
    prices,
    virtualModels: new VirtualModels({ store: storage.virtualModels, configModels: settings.virtualModels, ...stored }),
    failoverRules: new FailoverRules({ store: storage.failoverRules, configRules: settings.failoverRules, ...stored }),
    cache: await createResponseCache(settings, logger),
    mcp: settings.mcp.enabled ? await startMcp(settings, storage, logger) : null,
    responses: new ResponseState({
      store: storage.responses,
      retentionMs: settings.responses.retentionDays * 86_400_000,
      sweepIntervalMs: responsesSweepIntervalMs,
      logger,
    }),
    rateLimiting,
    retentionSweep:
      requestLog && new RetentionSweep({ store: storage.requestLog, retentionDays: settings.requestLog.retentionDays, logger }),
  };
}

/**
 * The one list of services, in start order: main starts it, shutdown stops it in reverse
 * (recorders flush before the database closes), hot reload and the other workers' admin writes
 * go through it.
 */
export function serviceList(settings: Settings, logger: Logger, stateful: StatefulServices, runtime: RuntimeServices): GatewayService[] {
  const { catalog } = runtime.providers;
  return [
    { name: 'tracing', stop: async () => runtime.tracer?.stop() },
    { name: 'upstream-client', stop: () => runtime.client.close() },
    providerService(runtime.providers, settings, logger),
    { name: 'prices', applySettings: async (next) => stateful.prices.replace(new Map(Object.entries(next.pricing))) },
    ...statefulServiceList(stateful),
    {
      name: 'guardrails',
      start: () => runtime.guardrails.start(),
      reload: () => runtime.guardrails.reload(),
      // Modules and entries are built before anything changes: a bad entry refuses the whole reload.
      checkSettings: (next) =>
        runtime.guardrails.applyConfigDefinitions(next.guardrails.map((entry) => ({ name: entry.name, settings: entry }))),
      stop: async () => runtime.guardrails.stop(),
    },
    { name: 'model-catalog', start: () => catalog.start(runtime.initialListingWaitMs), stop: async () => catalog.stop() },
  ];
}

function statefulServiceList(stateful: StatefulServices): GatewayService[] {
  const { storage, recorder, requestLog, retentionSweep, rateLimiting, failoverRules, virtualModels, apiKeys, budgets, responses } =
    stateful;
  const { cache, mcp } = stateful;
  return [
    { name: 'response-cache', stop: async () => cache?.close() },
    { name: 'storage', stop: () => storage.close() },
    {
      name: 'recorders',
      start: async () => {
        recorder?.start();
        requestLog?.start();
        retentionSweep?.start();
      },
      stop: async () => {
        const stopRequestLog = async (): Promise<void> => {
          await retentionSweep?.stop();
          await requestLog?.stop();
        };
        await Promise.all([recorder?.stop(), stopRequestLog()]);
      },
    },
    ...(rateLimiting === null ? [] : [rateLimitService(rateLimiting)]),
    {
      name: 'failover-rules',
      start: () => failoverRules.start(),
      reload: () => failoverRules.reload(),
      applySettings: (next) => failoverRules.applyConfigDefinitions(next.failoverRules),
      stop: async () => failoverRules.stop(),
    },
    {
      name: 'virtual-models',
      start: () => virtualModels.start(),
      reload: () => virtualModels.reload(),
      applySettings: (next) => virtualModels.applyConfigDefinitions(next.virtualModels),
      stop: async () => virtualModels.stop(),
    },
    { name: 'api-keys', start: () => apiKeys.start(), reload: () => apiKeys.reload(), stop: async () => apiKeys.stop() },
    ...(budgets === null ? [] : [budgetService(budgets)]),
    { name: 'responses', start: async () => responses.start(), stop: () => responses.stop() },
    ...(mcp === null ? [] : [mcpService(mcp)]),
  ];
}

function rateLimitService(rateLimiting: RateLimiting): GatewayService {
  return {
    name: 'rate-limits',
    reload: () => rateLimiting.limiter.reload(),
    applySettings: (next) => rateLimiting.limiter.applyConfigRules(next.rateLimits.rules),
    stop: () => rateLimiting.close(),
  };
}

function budgetService(budgets: BudgetService): GatewayService {
  return {
    name: 'budgets',
    start: () => budgets.start(),
    reload: () => budgets.refresh(),
    applySettings: (next) => budgets.applyConfigRules(next.budgets.rules),
    stop: async () => budgets.stop(),
  };
}

function mcpService(mcp: McpGateway): GatewayService {
  return {
    name: 'mcp',
    async reload(route) {
      await mcp.registry.reload();
      // A reconnect redials the server in every worker: each holds its own connection and catalog.
      const slug = /^\/admin\/mcp-servers\/([^/?]+)\/reconnect(?:\?|$)/.exec(route)?.[1];
      const server = slug === undefined ? undefined : mcp.registry.server(canonicalMcpName(decodeURIComponent(slug)));
      if (server !== undefined) await mcp.upstreams.reconnect(server);
    },
    applySettings: (next) => mcp.registry.applyConfig(next.mcp.servers, next.mcp.virtualServers),
    stop: () => mcp.close(),
  };
}

/** With WORKERS > 1 an MCP session id names its worker, so that the other workers relay its requests there. */
function startMcp(settings: Settings, storage: Storage, logger: Logger): Promise<McpGateway> {
  return McpGateway.start({
    settings: settings.mcp,
    storage,
    logger,
    reloadIntervalMs: settings.reloadIntervalMs,
    sessionIdPrefix: mcpSessionIdPrefix(),
    listenHost: settings.server.host,
  });
}

async function createBudgets(
  settings: Settings,
  storage: Storage,
  recorder: UsageRecorder | null,
  logger: Logger,
): Promise<BudgetService | null> {
  if (!settings.budgets.enabled) return null;
  if (recorder === null) {
    if (settings.budgets.rules.length > 0) logger.warn('budgets are configured but USAGE_ENABLED is off: budgets are not enforced');
    return null;
  }
  return new BudgetService({
    store: storage.budgets,
    configRules: settings.budgets.rules,
    whileSettled: (read) => recorder.whileSettled(read),
    // Other processes write usage to the same database: replicas on PostgreSQL, or this instance's other workers.
    sharedDatabase: storage.kind === 'postgresql' || settings.server.workers > 1,
    // Replicas (and workers) on one Redis check and hold budgets there at once (not a refresh later).
    sharedStore:
      settings.budgets.redisUrl === null
        ? null
        : new RedisBudgetStore({
            client: await connectRedisForCounters({ url: settings.budgets.redisUrl }),
            prefix: `${settings.rateLimits.redisPrefix ?? 'gateway:'}budget:`,
            logger,
          }),
    refreshIntervalMs: settings.budgets.refreshIntervalMs,
    logger,
  });
}

async function createResponseCache(settings: Settings, logger: Logger): Promise<ResponseCache | null> {
  const options = settings.responseCache;
  if (!options.enabled) return null;
  const store =
    options.store === 'redis' && options.redisUrl !== null
      ? await createRedisCacheStore({ url: options.redisUrl, logger })
      : new MemoryCacheStore({ maxEntries: options.maxEntries, maxBytes: options.maxBytes });
  logger.info({ store: options.store, ttl_seconds: options.ttlSeconds, scope: options.scope }, 'response cache ready');
  return new ResponseCache({ store, ttlSeconds: options.ttlSeconds, maxEntryBytes: options.maxEntryBytes, scope: options.scope, logger });
}
