import type { ResponseCacheScope } from '../cache/cache-key.ts';
import type { ProviderType } from '../providers/provider-types.ts';
import type { ProviderSettings } from '../providers/provider-settings.ts';
import type { RateLimitSettings } from '../ratelimit/rate-limit-settings.ts';
import type { StorageSettings } from '../storage/storage.ts';
import type { ModelPrice } from '../usage/price-table.ts';
import type { RequestLogSettings } from '../request-log/request-log-settings.ts';
import type { VirtualModelDefinition } from '../routing/virtual-model.ts';
import type { FailoverRuleDefinition } from '../routing/failover-rule.ts';
import type { BudgetRuleSettings } from '../budgets/budget-settings.ts';
import type { McpSettings } from '../mcp/mcp-settings.ts';
import type { JwtSettings } from '../auth/auth-settings.ts';
import type { TracingSettings } from '../observability/tracing-settings.ts';
import type { GuardrailSettings } from '../guardrails/guardrail-settings.ts';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** A provider instance declared but not registered: a setting it needs is missing (`GET /health/ready` lists it). */
export interface DisabledProvider {
  readonly name: string;
  readonly type: ProviderType;
  /** What is missing, naming the setting, e.g. `no api_key is set: the environment variable X is empty or unset`. */
  readonly reason: string;
  /** The setting to give: an environment variable, or a YAML path when none is involved. */
  readonly setting: string;
  /** Its configured models (a request for one answers 503 `provider_unavailable`), null when none were listed. */
  readonly models: readonly string[] | null;
}

/** The validated, frozen settings every other module receives. */
export interface Settings {
  readonly configFile: string | null;
  readonly server: {
    readonly host: string;
    readonly port: number;
    readonly masterKey: string | null;
    /** ALLOW_OPEN_NETWORK: open mode may listen on a non-loopback address (refused otherwise). */
    readonly allowOpenNetwork: boolean;
    readonly bodySizeLimit: number;
    readonly userPathHeader: string;
    readonly shutdownTimeoutSeconds: number;
    /** Time to receive a request's headers (slow clients get 408). */
    readonly headersTimeoutSeconds: number;
    /** Time to receive a whole request, headers and body (408); the answer, streams included, is not bounded. */
    readonly bodyTimeoutSeconds: number;
    /** HTTP worker processes (WORKERS; `auto` resolved to the available cores); 1 runs no cluster. */
    readonly workers: number;
  };
  readonly logging: { readonly level: LogLevel };
  /** `auth` (METRICS_AUTH): /metrics needs the master key or an admin or viewer key; off: /metrics is public. */
  readonly metrics: { readonly enabled: boolean; readonly auth: boolean };
  /** OTEL_* variables (src/observability/tracing-settings.ts). */
  readonly tracing: TracingSettings;
  readonly storage: StorageSettings;
  readonly usage: { readonly enabled: boolean; readonly flushIntervalMs: number; readonly batchSize: number };
  /** The request log (src/request-log/); batches share the usage flush interval and batch size. */
  readonly requestLog: RequestLogSettings;
  readonly budgets: {
    readonly enabled: boolean;
    readonly refreshIntervalMs: number;
    readonly rules: readonly BudgetRuleSettings[];
    /** REDIS_URL when set: spend and reservations shared by replicas at once. */
    readonly redisUrl: string | null;
  };
  readonly rateLimits: RateLimitSettings;
  /** How often state changed through another replica's admin API is re-read from the database. */
  readonly reloadIntervalMs: number;
  /** YAML `pricing:` overrides, by `<model>` or `<instance>/<model>`. */
  readonly pricing: Readonly<Record<string, ModelPrice>>;
  readonly providers: readonly ProviderSettings[];
  /** Instances dropped for a missing setting (not registered; requests for their models answer 503). */
  readonly disabledProviders: readonly DisabledProvider[];
  /** Declared virtual models (YAML `virtual_models:`, `VIRTUAL_MODELS`), in declaration order. */
  readonly virtualModels: readonly VirtualModelDefinition[];
  /** Declared failover rules for direct requests (YAML `failover.rules:`), read-only through the admin API. */
  readonly failoverRules: readonly FailoverRuleDefinition[];
  /** YAML `guardrails:`, in order (src/guardrails/). */
  readonly guardrails: readonly GuardrailSettings[];
  readonly models: {
    readonly refreshIntervalSeconds: number;
    readonly recheckIntervalSeconds: number;
  };
  readonly upstream: {
    readonly timeoutSeconds: number;
    readonly connectTimeoutSeconds: number;
    readonly maxConnections: number;
    /** Extra tries on the same instance after a connection error, 502 or 503. */
    readonly retries: number;
    readonly retryBaseDelayMs: number;
    readonly circuitBreakerFailures: number;
    readonly circuitBreakerOpenSeconds: number;
    /** Bound on an upstream answer read into memory (non-streamed JSON); past it: 502. */
    readonly maxResponseBytes: number;
  };
  readonly responseCache: {
    readonly enabled: boolean;
    readonly store: 'memory' | 'redis';
    readonly ttlSeconds: number;
    readonly maxEntries: number;
    readonly maxBytes: number;
    readonly maxEntryBytes: number;
    /** Whose requests share entries (part of every key): `user_path`, `key` or `global`. */
    readonly scope: ResponseCacheScope;
    readonly redisUrl: string | null;
  };
  readonly mcp: McpSettings;
  /** Responses the gateway stores (`/v1/responses` through the chat translation). */
  readonly responses: { readonly retentionDays: number };
  /** Trusted JWT issuers (YAML `auth.jwt`); none: JWT bearer tokens are not accepted. */
  readonly auth: { readonly jwt: JwtSettings };
}

export interface LoadedSettings {
  readonly settings: Settings;
  /** Problems that do not stop the gateway; main logs them at startup. */
  readonly warnings: readonly string[];
}
