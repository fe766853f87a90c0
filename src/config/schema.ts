import { z } from 'zod';
import { providerTypeNames } from '../providers/provider-types.ts';
import { parseByteSize } from './values.ts';
import { authSchema } from '../auth/auth-settings.ts';

/**
 * The configuration schema. YAML and environment variables are merged into one raw document
 * shaped like the YAML file, then validated here once. Scalars may arrive as strings
 * (environment, `${VAR}` expansion), so numbers and booleans are coerced.
 */

/** An empty value (`port:` or an unset `${VAR}`) means "not given": the default applies. */
const blankAsMissing = (value: unknown): unknown => (value === '' || value === null ? undefined : value);

const integer = (min: number, max: number, fallback: number) =>
  z.preprocess(
    blankAsMissing,
    z.coerce
      .number({ error: 'expected a number' })
      .int({ error: 'expected an integer' })
      .min(min, { error: `expected an integer from ${min} to ${max}` })
      .max(max, { error: `expected an integer from ${min} to ${max}` })
      .default(fallback),
  );

const byteSize = (maximumMegabytes: number) =>
  z.union([z.number(), z.string()]).transform((value, context) => {
    try {
      return parseByteSize('', value, maximumMegabytes * 1024 ** 2);
    } catch {
      context.addIssue({
        code: 'custom',
        message: `expected a size from 1KB to ${maximumMegabytes}MB such as 512K or 10MB, got ${JSON.stringify(value)}`,
      });
      return z.NEVER;
    }
  });

const workerCount = z.preprocess(
  blankAsMissing,
  z.union([z.literal('auto'), z.coerce.number().int().min(1).max(256)], { error: 'expected auto or an integer from 1 to 256' }).default(1),
);

const booleanValue = z.union([z.boolean(), z.stringbool({ error: 'expected true or false' })]);

const optionalString = z
  .union([z.string(), z.number()])
  .transform((value) => String(value).trim())
  .optional();

const headerName = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9-]+$/, { error: 'expected an HTTP header name (letters, digits and -)' });

const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
  error: 'expected one of fatal, error, warn, info, debug, trace, silent',
});

const modelEntry = z.union([z.string().trim().min(1), z.object({ id: z.string().trim().min(1) }).transform((entry) => entry.id)]);

export const providerSchema = z.object({
  type: z.enum(providerTypeNames, { error: `expected one of ${providerTypeNames.join(', ')}` }),
  api_key: optionalString,
  base_url: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional(),
  models: z.union([z.array(modelEntry), z.string().transform((list) => splitList(list))]).optional(),
  // Type-specific settings (README "Providers"): Azure, Bedrock, Vertex, Gemini.
  api_version: optionalString,
  deployments: z.record(z.string(), z.string().trim().min(1)).optional(),
  region: optionalString,
  aws_access_key_id: optionalString,
  aws_secret_access_key: optionalString,
  aws_session_token: optionalString,
  project: optionalString,
  location: optionalString,
  credentials: optionalString,
  credentials_json: optionalString,
  api: z.enum(['native', 'openai'], { error: 'expected native or openai' }).optional(),
  /** Passthrough: forward the client's account-selecting headers (OpenAI-Organization, ...); off by default. */
  forward_account_headers: booleanValue.optional(),
  /** The instance that receives /v1 resource calls (files, assistants, ...) without a `provider` hint. */
  resources_default: booleanValue.optional(),
});

const dollars = z.coerce
  .number({ error: 'expected a number of USD per million tokens' })
  .min(0, { error: 'expected a price of at least 0' });

const priceSchema = z.object({
  input_per_mtok: dollars,
  output_per_mtok: dollars,
  cached_input_per_mtok: dollars.optional(),
  cache_write_per_mtok: dollars.optional(),
  /** A fine-tuning job's trained tokens. */
  training_per_mtok: dollars.optional(),
  /** A generated video's seconds (USD per second). */
  per_second: dollars.optional(),
});

export const instanceName = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const configSchema = z.object({
  server: z
    .object({
      host: optionalString,
      port: integer(0, 65535, 8080),
      master_key: optionalString,
      /** Open mode (no credential of any kind) on a non-loopback address: refused unless true. */
      allow_open_network: booleanValue.default(false),
      body_size_limit: byteSize(100).default(10 * 1024 * 1024),
      user_path_header: headerName.default('X-User-Path'),
      shutdown_timeout_seconds: integer(0, 3600, 30),
      /** Time to receive a request's headers, then the whole request (headers and body); answers are not bounded. */
      headers_timeout_seconds: integer(1, 3600, 30),
      body_timeout_seconds: integer(1, 86400, 300),
      /** Processes serving HTTP: a number from 1 to 256, or `auto` (one per available core). */
      workers: workerCount,
    })
    .prefault({}),
  logging: z.object({ level: logLevel.default('info') }).prefault({}),
  metrics: z.object({ enabled: booleanValue.default(false), auth: booleanValue.default(false) }).prefault({}),
  providers: z.record(z.string(), providerSchema).default({}),
  models: z
    .object({
      refresh_interval_seconds: integer(10, 7 * 86400, 3600),
      recheck_interval_seconds: integer(1, 86400, 60),
    })
    .prefault({}),
  storage: z
    .object({
      type: z.enum(['sqlite', 'postgresql'], { error: 'expected sqlite or postgresql' }).default('sqlite'),
      sqlite_path: z.string().trim().min(1).default('./data/gateway.db'),
      database_url: optionalString,
      /** How often rules, budgets, keys and virtual models changed by another replica are re-read. */
      reload_interval_seconds: integer(1, 3600, 2),
    })
    .prefault({}),
  usage: z
    .object({
      enabled: booleanValue.default(true),
      flush_interval_ms: integer(10, 60_000, 100),
      batch_size: integer(1, 10_000, 500),
    })
    .prefault({}),
  request_log: z
    .object({
      enabled: booleanValue.default(true),
      bodies: z.enum(['off', 'errors', 'all'], { error: 'expected off, errors or all' }).default('off'),
      body_max_bytes: integer(256, 10_485_760, 16_384),
      retention_days: integer(1, 3650, 30),
    })
    .prefault({}),
  budgets: z
    .object({
      enabled: booleanValue.default(true),
      refresh_interval_seconds: integer(1, 3600, 2),
      user_paths: z.unknown().optional(),
    })
    .prefault({}),
  rate_limits: z
    .object({
      enabled: booleanValue.default(true),
      store: z.enum(['memory', 'redis'], { error: 'expected memory or redis' }).default('memory'),
      fail_mode: z.enum(['open', 'closed'], { error: 'expected open or closed' }).default('open'),
      lease_ttl_seconds: integer(1, 3600, 30),
      redis_prefix: optionalString,
      user_paths: z.unknown().optional(),
      providers: z.unknown().optional(),
      models: z.unknown().optional(),
    })
    .prefault({}),
  pricing: z.record(z.string(), priceSchema).default({}),
  /** Validated by config/virtual-models.ts, which needs the registered instance names. */
  virtual_models: z.unknown().optional(),
  /** Failover rules for direct requests; each rule is validated by config/failover.ts (shared with the admin API). */
  failover: z.object({ rules: z.unknown().optional() }).prefault({}),
  /** Validated by guardrails/guardrail-settings.ts. */
  guardrails: z.unknown().optional(),
  upstream: z
    .object({
      timeout_seconds: integer(1, 86400, 600),
      connect_timeout_seconds: integer(1, 600, 10),
      max_connections: integer(1, 100000, 256),
      retries: integer(0, 10, 1),
      retry_base_delay_ms: integer(0, 60_000, 100),
      circuit_breaker_failures: integer(1, 1000, 5),
      circuit_breaker_open_seconds: integer(1, 3600, 30),
      max_response_bytes: byteSize(512).default(64 * 1024 * 1024),
    })
    .prefault({}),
  response_cache: z
    .object({
      enabled: booleanValue.default(false),
      store: z.enum(['memory', 'redis'], { error: 'expected memory or redis' }).default('memory'),
      ttl_seconds: integer(1, 30 * 86400, 3600),
      max_entries: integer(1, 10_000_000, 10_000),
      max_bytes: byteSize(16 * 1024).default(256 * 1024 * 1024),
      max_entry_bytes: byteSize(100).default(1024 * 1024),
      /** Whose requests share entries: the same user path (default), the same credential, or everyone. */
      scope: z.enum(['user_path', 'key', 'global'], { error: 'expected user_path, key or global' }).default('user_path'),
    })
    .prefault({}),
  redis: z.object({ url: optionalString }).prefault({}),
  responses: z.object({ retention_days: integer(1, 3650, 30) }).prefault({}),
  /** Declarations are validated by config/mcp.ts (shared with the admin API). */
  mcp: z
    .object({
      enabled: booleanValue.default(true),
      tool_discovery: z.unknown().optional(),
      /** Browser origins allowed on /mcp (`*` for any); requests without an Origin header are not affected. */
      allowed_origins: z.union([z.array(z.string().trim()), z.string().transform((list) => splitList(list))]).default([]),
      /** Host header names allowed on /mcp besides the listening ones (`*` for any); see mcp/request-guard.ts. */
      allowed_hosts: z.union([z.array(z.string().trim()), z.string().transform((list) => splitList(list))]).default([]),
      /** Where Streamable HTTP stream events are kept for replay: default `redis` when REDIS_URL is set. */
      event_store: z.enum(['memory', 'redis'], { error: 'expected memory or redis' }).optional(),
      servers: z.unknown().optional(),
      virtual_servers: z.unknown().optional(),
      /** Upstream sessions of downstream sessions (ADR 0033): at most this many per server, closed after this long idle. */
      max_upstream_sessions_per_server: integer(1, 100_000, 100),
      upstream_session_idle_seconds: integer(1, 86_400, 300),
    })
    .prefault({}),
  /** JWT bearer tokens from trusted issuers (auth/auth-settings.ts). */
  auth: authSchema,
});

export type ConfigDocument = z.output<typeof configSchema>;
export type ProviderDocument = z.output<typeof providerSchema>;

export function splitList(list: string): string[] {
  return list
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
