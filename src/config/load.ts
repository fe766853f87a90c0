import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type * as Yaml from 'yaml';
import type { z } from 'zod';
import { providerTypes } from '../providers/provider-types.ts';
import { ConfigError } from '../errors/config-error.ts';
import type { StorageSettings } from '../storage/storage.ts';
import { buildBudgetRules } from './budgets.ts';
import { buildRateLimitRules } from './rate-limits.ts';
import { buildFailoverRules } from './failover.ts';
import { buildMcpSettings } from './mcp.ts';
import { buildAuthSettings } from '../auth/auth-settings.ts';
import { buildTracingSettings } from '../observability/tracing-settings.ts';
import { buildGuardrails } from '../guardrails/guardrail-settings.ts';
import { discoverEnvProviders } from './env-providers.ts';
import { buildProvidersAndVirtualModels, recordKeyVariables } from './providers.ts';
import { applyAzureEnvironment } from '../providers/azure/settings-from-env.ts';
import { configSchema, type ConfigDocument } from './schema.ts';
import { unknownKeys } from './unknown-keys.ts';
import type { LoadedSettings, Settings } from './settings.ts';
import { deepFreeze, expandVariables } from './values.ts';
import { isJsonObject } from '../core/json.ts';
import { closestNames, didYouMean } from '../core/closest-names.ts';

type Env = Readonly<Record<string, string | undefined>>;
type RawDocument = Record<string, unknown>;

export interface LoadOptions {
  argv: readonly string[];
  env: Env;
  cwd: string;
}

/** Environment variables that override one YAML key each (docs/configuration.md lists them; a test holds the two together). */
export const scalarVariables: ReadonlyArray<readonly [variable: string, path: readonly [string, string]]> = [
  ['PORT', ['server', 'port']],
  ['HOST', ['server', 'host']],
  ['MASTER_KEY', ['server', 'master_key']],
  ['ALLOW_OPEN_NETWORK', ['server', 'allow_open_network']],
  ['BODY_SIZE_LIMIT', ['server', 'body_size_limit']],
  ['USER_PATH_HEADER', ['server', 'user_path_header']],
  ['SHUTDOWN_TIMEOUT_SECONDS', ['server', 'shutdown_timeout_seconds']],
  ['HEADERS_TIMEOUT_SECONDS', ['server', 'headers_timeout_seconds']],
  ['BODY_TIMEOUT_SECONDS', ['server', 'body_timeout_seconds']],
  ['WORKERS', ['server', 'workers']],
  ['LOG_LEVEL', ['logging', 'level']],
  ['METRICS_ENABLED', ['metrics', 'enabled']],
  ['METRICS_AUTH', ['metrics', 'auth']],
  ['MODELS_REFRESH_INTERVAL_SECONDS', ['models', 'refresh_interval_seconds']],
  ['MODELS_RECHECK_INTERVAL_SECONDS', ['models', 'recheck_interval_seconds']],
  ['STORAGE_TYPE', ['storage', 'type']],
  ['SQLITE_PATH', ['storage', 'sqlite_path']],
  ['POSTGRES_URL', ['storage', 'database_url']],
  ['DATABASE_URL', ['storage', 'database_url']],
  ['USAGE_ENABLED', ['usage', 'enabled']],
  ['USAGE_FLUSH_INTERVAL_MS', ['usage', 'flush_interval_ms']],
  ['USAGE_BATCH_SIZE', ['usage', 'batch_size']],
  ['REQUEST_LOG_ENABLED', ['request_log', 'enabled']],
  ['REQUEST_LOG_BODIES', ['request_log', 'bodies']],
  ['REQUEST_LOG_BODY_MAX_BYTES', ['request_log', 'body_max_bytes']],
  ['REQUEST_LOG_RETENTION_DAYS', ['request_log', 'retention_days']],
  ['BUDGETS_ENABLED', ['budgets', 'enabled']],
  ['RATE_LIMITS_ENABLED', ['rate_limits', 'enabled']],
  ['RATE_LIMITS_STORE', ['rate_limits', 'store']],
  ['RATE_LIMITS_FAIL_MODE', ['rate_limits', 'fail_mode']],
  ['RATE_LIMITS_LEASE_TTL_SECONDS', ['rate_limits', 'lease_ttl_seconds']],
  ['RATE_LIMITS_REDIS_PREFIX', ['rate_limits', 'redis_prefix']],
  ['RELOAD_INTERVAL_SECONDS', ['storage', 'reload_interval_seconds']],
  ['BUDGETS_REFRESH_INTERVAL_SECONDS', ['budgets', 'refresh_interval_seconds']],
  ['UPSTREAM_TIMEOUT_SECONDS', ['upstream', 'timeout_seconds']],
  ['UPSTREAM_CONNECT_TIMEOUT_SECONDS', ['upstream', 'connect_timeout_seconds']],
  ['UPSTREAM_MAX_CONNECTIONS', ['upstream', 'max_connections']],
  ['UPSTREAM_RETRIES', ['upstream', 'retries']],
  ['UPSTREAM_RETRY_BASE_DELAY_MS', ['upstream', 'retry_base_delay_ms']],
  ['CIRCUIT_BREAKER_FAILURES', ['upstream', 'circuit_breaker_failures']],
  ['CIRCUIT_BREAKER_OPEN_SECONDS', ['upstream', 'circuit_breaker_open_seconds']],
  ['UPSTREAM_MAX_RESPONSE_BYTES', ['upstream', 'max_response_bytes']],
  ['RESPONSE_CACHE_ENABLED', ['response_cache', 'enabled']],
  ['RESPONSE_CACHE_STORE', ['response_cache', 'store']],
  ['RESPONSE_CACHE_TTL_SECONDS', ['response_cache', 'ttl_seconds']],
  ['RESPONSE_CACHE_MAX_ENTRIES', ['response_cache', 'max_entries']],
  ['RESPONSE_CACHE_MAX_BYTES', ['response_cache', 'max_bytes']],
  ['RESPONSE_CACHE_MAX_ENTRY_BYTES', ['response_cache', 'max_entry_bytes']],
  ['RESPONSE_CACHE_SCOPE', ['response_cache', 'scope']],
  ['REDIS_URL', ['redis', 'url']],
  ['MCP_ENABLED', ['mcp', 'enabled']],
  ['MCP_TOOL_DISCOVERY', ['mcp', 'tool_discovery']],
  ['MCP_ALLOWED_ORIGINS', ['mcp', 'allowed_origins']],
  ['MCP_ALLOWED_HOSTS', ['mcp', 'allowed_hosts']],
  ['MCP_EVENT_STORE', ['mcp', 'event_store']],
  ['MCP_MAX_UPSTREAM_SESSIONS_PER_SERVER', ['mcp', 'max_upstream_sessions_per_server']],
  ['MCP_UPSTREAM_SESSION_IDLE_SECONDS', ['mcp', 'upstream_session_idle_seconds']],
  ['RESPONSES_RETENTION_DAYS', ['responses', 'retention_days']],
];

/** Settings of this process: its command line, environment and working directory. */
export function loadProcessSettings(): LoadedSettings {
  return loadSettings({ argv: process.argv.slice(2), env: process.env, cwd: process.cwd() });
}

/** Defaults, then the YAML file, then environment variables; validated once and frozen. */
export function loadSettings(options: LoadOptions): LoadedSettings {
  const warnings: string[] = [];
  const configFile = findConfigFile(options);
  /** YAML path -> the environment variable its value comes from. */
  const origins = new Map<string, string>();
  const document = configFile === null ? {} : readConfigFile(configFile, options.env, origins);
  for (const { path, known } of unknownKeys(configSchema, document)) {
    const suggestion = didYouMean(closestNames(path.slice(path.lastIndexOf('.') + 1), known));
    warnings.push(`unknown configuration key "${path}" is ignored${suggestion}`);
  }
  applyEnvironment(document, options.env, origins);
  // Parsed once per start or reload: zod's compiled fast path (generated with `new Function` on an
  // object schema's first parse) would cost more to build than it saves here (ADR 0025).
  const parsed = configSchema.safeParse(document, { jitless: true });
  if (!parsed.success) throw toConfigError(parsed.error, origins);
  const settings = buildSettings(parsed.data, configFile, origins, warnings, options.env);
  return { settings: deepFreeze(settings), warnings };
}

function findConfigFile({ argv, env, cwd }: LoadOptions): string | null {
  const flagIndex = argv.findIndex((argument) => argument === '--config' || argument.startsWith('--config='));
  const flag = argv[flagIndex];
  if (flag !== undefined) {
    const value = flag.includes('=') ? flag.slice('--config='.length) : argv[flagIndex + 1];
    if (!value) throw new ConfigError('--config', 'expected a file path');
    return requireFile('--config', resolve(cwd, value));
  }
  const fromEnv = env['CONFIG_FILE']?.trim();
  if (fromEnv) return requireFile('CONFIG_FILE', resolve(cwd, fromEnv));
  const fallback = resolve(cwd, 'config.yaml');
  return existsSync(fallback) ? fallback : null;
}

function requireFile(key: string, path: string): string {
  if (!existsSync(path)) throw new ConfigError(key, `file not found: ${path}`);
  return path;
}

/** The YAML parser, loaded only when a config file is given (not at every start-up). */
function parseYaml(text: string): unknown {
  const yaml = createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yaml.parse(text);
}

function readConfigFile(path: string, env: Env, origins: Map<string, string>): RawDocument {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(path, 'utf8'));
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new ConfigError(path, `not valid YAML: ${reason}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(path, 'expected a mapping at the top level');
  }
  recordKeyVariables(parsed, origins);
  return expandVariables(parsed, env) as RawDocument;
}

/** Writes environment overrides into the raw document, and records YAML path -> variable name in `origins`. */
function applyEnvironment(document: RawDocument, env: Env, origins: Map<string, string>): void {
  for (const [variable, [section, key]] of scalarVariables) {
    const value = env[variable];
    if (value === undefined || value.trim() === '') continue;
    sectionOf(document, section)[key] = value;
    origins.set(`${section}.${key}`, variable);
  }
  const providers = sectionOf(document, 'providers');
  for (const entry of discoverEnvProviders(env)) {
    const existing = providers[entry.name];
    const target: Record<string, unknown> = isJsonObject(existing) ? existing : {};
    target['type'] = entry.type;
    for (const field of ['api_key', 'base_url', 'models'] as const) {
      if (entry[field] === undefined) continue;
      target[field] = entry[field];
      origins.set(`providers.${entry.name}.${field}`, entry.variables[field]);
    }
    if (entry.api_key === undefined && providerTypes[entry.type].requiresApiKey && !origins.has(`providers.${entry.name}.api_key`)) {
      // Declared by <PREFIX>_BASE_URL or <PREFIX>_MODELS alone: the key it lacks is <PREFIX>_API_KEY.
      const declaring = entry.variables.base_url || entry.variables.models;
      origins.set(`providers.${entry.name}.api_key`, declaring.replace(/_(BASE_URL|MODELS)$/, '_API_KEY'));
    }
    if (!isJsonObject(existing)) origins.set(`providers.${entry.name}`, `${entry.type.toUpperCase()}_* variables`);
    providers[entry.name] = target;
  }
  applyAzureEnvironment(providers, env, origins);
}

function sectionOf(document: RawDocument, section: string): Record<string, unknown> {
  const current = document[section];
  if (isJsonObject(current)) return current;
  if (current !== undefined && current !== null) throw new ConfigError(section, 'expected a mapping');
  const created: Record<string, unknown> = {};
  document[section] = created;
  return created;
}

function toConfigError(error: z.ZodError, origins: Map<string, string>): ConfigError {
  const issue = error.issues[0];
  const path = (issue?.path ?? []).map(String).join('.');
  return new ConfigError(origins.get(path) ?? (path || '(root)'), issue?.message ?? 'invalid value');
}

function buildSettings(
  document: ConfigDocument,
  configFile: string | null,
  origins: Map<string, string>,
  warnings: string[],
  env: Env,
): Settings {
  return {
    configFile,
    server: buildServerSettings(document.server),
    logging: { level: document.logging.level },
    metrics: { enabled: document.metrics.enabled, auth: document.metrics.auth },
    storage: buildStorage(document, origins),
    usage: {
      enabled: document.usage.enabled,
      flushIntervalMs: document.usage.flush_interval_ms,
      batchSize: document.usage.batch_size,
    },
    requestLog: {
      enabled: document.request_log.enabled,
      bodies: document.request_log.bodies,
      bodyMaxBytes: document.request_log.body_max_bytes,
      retentionDays: document.request_log.retention_days,
    },
    budgets: {
      enabled: document.budgets.enabled,
      refreshIntervalMs: document.budgets.refresh_interval_seconds * 1000,
      rules: buildBudgetRules(document.budgets.user_paths, env),
      redisUrl: document.redis.url ? document.redis.url : null,
    },
    rateLimits: buildRateLimitSettings(document, origins, env),
    reloadIntervalMs: document.storage.reload_interval_seconds * 1000,
    pricing: buildPricing(document),
    ...buildProvidersAndVirtualModels(document, origins, warnings, env),
    failoverRules: buildFailoverRules(document.failover.rules),
    guardrails: buildGuardrails(document.guardrails, configFile),
    models: {
      refreshIntervalSeconds: document.models.refresh_interval_seconds,
      recheckIntervalSeconds: document.models.recheck_interval_seconds,
    },
    upstream: buildUpstream(document),
    responseCache: buildResponseCache(document, origins),
    mcp: buildMcpSettings(document.mcp, env, origins, warnings, document.redis.url ? document.redis.url : null),
    responses: { retentionDays: document.responses.retention_days },
    auth: buildAuthSettings(document.auth),
    tracing: buildTracingSettings(env),
  };
}

function buildServerSettings(server: ConfigDocument['server']): Settings['server'] {
  const masterKey = server.master_key ? server.master_key : null;
  return {
    host: server.host || (masterKey === null ? '127.0.0.1' : '0.0.0.0'),
    port: server.port,
    masterKey,
    allowOpenNetwork: server.allow_open_network,
    bodySizeLimit: server.body_size_limit,
    userPathHeader: server.user_path_header.toLowerCase(),
    shutdownTimeoutSeconds: server.shutdown_timeout_seconds,
    // The whole request cannot take less time than its headers.
    headersTimeoutSeconds: Math.min(server.headers_timeout_seconds, server.body_timeout_seconds),
    bodyTimeoutSeconds: server.body_timeout_seconds,
    workers: server.workers === 'auto' ? availableParallelism() : server.workers,
  };
}

function buildPricing(document: ConfigDocument): Settings['pricing'] {
  return Object.fromEntries(
    Object.entries(document.pricing).map(([model, price]) => [
      model,
      {
        inputPerMtok: price.input_per_mtok,
        outputPerMtok: price.output_per_mtok,
        ...(price.cached_input_per_mtok === undefined ? {} : { cachedInputPerMtok: price.cached_input_per_mtok }),
        ...(price.cache_write_per_mtok === undefined ? {} : { cacheWritePerMtok: price.cache_write_per_mtok }),
        ...(price.training_per_mtok === undefined ? {} : { trainingPerMtok: price.training_per_mtok }),
        ...(price.per_second === undefined ? {} : { perSecond: price.per_second }),
      },
    ]),
  );
}

function buildUpstream(document: ConfigDocument): Settings['upstream'] {
  const upstream = document.upstream;
  return {
    timeoutSeconds: upstream.timeout_seconds,
    connectTimeoutSeconds: upstream.connect_timeout_seconds,
    maxConnections: upstream.max_connections,
    retries: upstream.retries,
    retryBaseDelayMs: upstream.retry_base_delay_ms,
    circuitBreakerFailures: upstream.circuit_breaker_failures,
    circuitBreakerOpenSeconds: upstream.circuit_breaker_open_seconds,
    maxResponseBytes: upstream.max_response_bytes,
  };
}

function buildRateLimitSettings(document: ConfigDocument, origins: Map<string, string>, env: Env): Settings['rateLimits'] {
  const limits = document.rate_limits;
  const redisUrl = document.redis.url ? document.redis.url : null;
  if (limits.enabled && limits.store === 'redis' && redisUrl === null) {
    throw new ConfigError(origins.get('rate_limits.store') ?? 'rate_limits.store', 'the redis store needs REDIS_URL (redis.url)');
  }
  return {
    enabled: limits.enabled,
    // Disabled rate limits ignore their declarations entirely (nothing is validated).
    rules: limits.enabled ? buildRateLimitRules(limits, env) : [],
    store: limits.store,
    redisUrl: limits.store === 'redis' ? redisUrl : null,
    redisPrefix: limits.redis_prefix ? limits.redis_prefix : null,
    failMode: limits.fail_mode,
    leaseTtlMs: limits.lease_ttl_seconds * 1000,
  };
}

function buildResponseCache(document: ConfigDocument, origins: Map<string, string>): Settings['responseCache'] {
  const cache = document.response_cache;
  const redisUrl = document.redis.url ? document.redis.url : null;
  if (cache.enabled && cache.store === 'redis' && redisUrl === null) {
    throw new ConfigError(origins.get('response_cache.store') ?? 'response_cache.store', 'the redis store needs REDIS_URL (redis.url)');
  }
  return {
    enabled: cache.enabled,
    store: cache.store,
    ttlSeconds: cache.ttl_seconds,
    maxEntries: cache.max_entries,
    maxBytes: cache.max_bytes,
    maxEntryBytes: cache.max_entry_bytes,
    scope: cache.scope,
    redisUrl,
  };
}

function buildStorage(document: ConfigDocument, origins: Map<string, string>): StorageSettings {
  const storage = document.storage;
  if (storage.type === 'sqlite') return { type: 'sqlite', sqlitePath: storage.sqlite_path };
  if (!storage.database_url) {
    throw new ConfigError(origins.get('storage.type') ?? 'storage.type', 'postgresql storage needs DATABASE_URL (storage.database_url)');
  }
  return { type: 'postgresql', databaseUrl: storage.database_url };
}
