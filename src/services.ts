import type { Logger } from 'pino';
import { BudgetService } from './budgets/budget-service.ts';
import { RedisBudgetStore } from './budgets/redis-budget-store.ts';
import { MemoryCacheStore } from './cache/memory-cache-store.ts';
import { createRedisCacheStore } from './cache/redis-cache-store.ts';
import { ResponseCache } from './cache/response-cache-service.ts';
import type { Settings } from './config/settings.ts';
import type { ClusterWorker } from './cluster/worker.ts';
import { ApiKeyService } from './auth/api-keys/api-key-service.ts';
import { McpGateway } from './mcp/mcp-gateway.ts';
import type { RateLimiter } from './ratelimit/rate-limiter.ts';
import { startRateLimiting } from './ratelimit/rate-limiting.ts';
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
  /** Stops timers, flushes buffered usage and closes the database, in that order. */
  close(): Promise<void>;
}

/** How often expired stored responses are swept. */
const responsesSweepIntervalMs = 10 * 60_000;

/**
 * Opens the database and starts the services that keep state in it. A worker of a multi-worker
 * gateway (`worker`) keeps its rate-limit counters and budget holds in the primary.
 */
export async function startStatefulServices(settings: Settings, logger: Logger, worker?: ClusterWorker | null): Promise<StatefulServices> {
  const storage = await openStorage(settings.storage);
  logger.info({ storage: storage.kind }, 'storage ready');
  const recorder = settings.usage.enabled
    ? new UsageRecorder({
        store: storage.usage,
        flushIntervalMs: settings.usage.flushIntervalMs,
        batchSize: settings.usage.batchSize,
        logger,
      })
    : null;
  recorder?.start();
  const requestLog = startRequestLog(settings, storage, logger);
  const budgets = await createBudgets(settings, storage, recorder, logger, worker ?? null);
  await budgets?.start();
  const apiKeys = new ApiKeyService({ store: storage.apiKeys, refreshIntervalMs: settings.reloadIntervalMs, logger });
  await apiKeys.start();
  const usageEnabled = recorder !== null;
  const rateLimiting = await startRateLimiting({ settings, ruleStore: storage.rateLimitRules, usageEnabled, logger, worker });
  const limiter = rateLimiting?.limiter ?? null;
  const prices = new PriceBook(new Map(Object.entries(settings.pricing)));
  const metering = new Metering({ recorder, budgets, limiter, prices });
  const virtualModels = await startVirtualModels(settings, storage, logger);
  const failoverRules = await startFailoverRules(settings, storage, logger);
  const cache = await createResponseCache(settings, logger);
  const mcp = settings.mcp.enabled ? await startMcp(settings, storage, logger, worker ?? null) : null;
  const responses = startResponseState(settings, storage, logger);
  return {
    storage,
    recorder,
    requestLog: requestLog?.recorder ?? null,
    budgets,
    limiter,
    rateLimitCounters: rateLimiting?.sharedCounters ?? null,
    apiKeys,
    metering,
    prices,
    virtualModels,
    failoverRules,
    cache,
    mcp,
    responses,
    async close() {
      await mcp?.close();
      await responses.stop();
      budgets?.stop();
      apiKeys.stop();
      virtualModels.stop();
      failoverRules.stop();
      await rateLimiting?.close();
      await Promise.all([recorder?.stop(), requestLog?.stop()]);
      await storage.close();
      await cache?.close();
    },
  };
}

/** A worker's MCP session ids name it, so that the other workers relay their requests to it. */
function startMcp(settings: Settings, storage: Storage, logger: Logger, worker: ClusterWorker | null): Promise<McpGateway> {
  const sessionIdPrefix = worker?.mcpSessionIdPrefix ?? '';
  return McpGateway.start({
    settings: settings.mcp,
    storage,
    logger,
    reloadIntervalMs: settings.reloadIntervalMs,
    sessionIdPrefix,
    listenHost: settings.server.host,
  });
}

async function startVirtualModels(settings: Settings, storage: Storage, logger: Logger): Promise<VirtualModels> {
  const models = new VirtualModels({
    store: storage.virtualModels,
    configModels: settings.virtualModels,
    logger,
    reloadIntervalMs: settings.reloadIntervalMs,
  });
  await models.start();
  return models;
}

/** The request log's batching recorder (same cadence as usage records) and its retention sweep. */
function startRequestLog(
  settings: Settings,
  storage: Storage,
  logger: Logger,
): { recorder: RequestLogRecorder; stop(): Promise<void> } | null {
  if (!settings.requestLog.enabled) return null;
  const { flushIntervalMs, batchSize } = settings.usage;
  const recorder = new RequestLogRecorder({ store: storage.requestLog, flushIntervalMs, batchSize, logger });
  const sweep = new RetentionSweep({ store: storage.requestLog, retentionDays: settings.requestLog.retentionDays, logger });
  recorder.start();
  sweep.start();
  return {
    recorder,
    async stop() {
      await sweep.stop();
      await recorder.stop();
    },
  };
}

async function startFailoverRules(settings: Settings, storage: Storage, logger: Logger): Promise<FailoverRules> {
  const rules = new FailoverRules({
    store: storage.failoverRules,
    configRules: settings.failoverRules,
    logger,
    reloadIntervalMs: settings.reloadIntervalMs,
  });
  await rules.start();
  return rules;
}

async function createBudgets(
  settings: Settings,
  storage: Storage,
  recorder: UsageRecorder | null,
  logger: Logger,
  worker: ClusterWorker | null,
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
    sharedDatabase: storage.kind === 'postgresql' || worker !== null,
    // Replicas on one Redis check and hold budgets there at once (not a refresh later); the
    // workers of one instance without Redis, in the primary.
    sharedStore:
      settings.budgets.redisUrl === null
        ? (worker?.budgets ?? null)
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

function startResponseState(settings: Settings, storage: Storage, logger: Logger): ResponseState {
  const responses = new ResponseState({
    store: storage.responses,
    retentionMs: settings.responses.retentionDays * 86_400_000,
    sweepIntervalMs: responsesSweepIntervalMs,
    logger,
  });
  responses.start();
  return responses;
}
