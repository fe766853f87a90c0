import { z } from 'zod';

/**
 * The 200 answers of the admin API. Each route's render function is typed as the schema's
 * output (`z.output<typeof ...>`), so the compiler holds a render and its schema together, and
 * GET /openapi.json states these schemas as the answers (closed objects: a field the schema
 * does not name fails the e2e validation of recorded answers).
 */

const isoTime = z.string().describe('ISO 8601 time');
const origin = z.enum(['config', 'manual']);

export const apiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  redacted: z.string(),
  user_path: z.string().nullable(),
  active: z.boolean(),
  created_at: isoTime.nullable(),
  expires_at: isoTime.nullable(),
  deactivated_at: isoTime.nullable(),
  allowed_models: z.array(z.string()).nullable(),
  allowed_endpoints: z.array(z.string()).nullable(),
  role: z.enum(['user', 'viewer', 'admin']),
  previous_key_expires_at: isoTime.nullable(),
});
/** Creation and rotation: the key with its secret, shown this once. */
export const apiKeyWithSecretSchema = apiKeySchema.extend({ key: z.string().describe('the secret; shown once') });
/** The listing adds each key's activity over `window` from the request log (null when it is off). */
export const apiKeyListSchema = z.array(
  apiKeySchema.extend({
    last_used_at: isoTime.nullable(),
    requests: z.number().int().nullable(),
    cost_usd: z.number().nullable().describe('null when the log is off or a request with tokens had no price'),
  }),
);

export const auditEntrySchema = z.object({
  id: z.string(),
  time: isoTime.nullable(),
  actor: z.string(),
  action: z.string(),
  resource: z.string(),
  before: z.unknown(),
  after: z.unknown(),
});
export const auditPageSchema = z.object({ entries: z.array(auditEntrySchema), next_cursor: z.string().nullable() });

export const usageTotalsSchema = z.object({
  requests: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  cost_usd: z.number().nullable().describe('null as soon as one record of the group has no known price'),
  unpriced_requests: z.number().int(),
});
export const usageReportSchema = z.object({
  from: isoTime.nullable(),
  to: isoTime.nullable(),
  group_by: z.enum(['user_path', 'provider', 'model', 'day', 'api_key']),
  bucket: z.enum(['hour', 'day']).optional(),
  rows: z.array(usageTotalsSchema.extend({ bucket: isoTime.nullable().optional(), key: z.string().nullable() })),
});

const attemptSchema = z.object({
  provider: z.string(),
  model: z.string(),
  status: z.number().int().nullable(),
  latency_ms: z.number().nullable(),
  error_code: z.string().nullable(),
});
export const requestLogEntrySchema = z.object({
  id: z.string(),
  time: isoTime.nullable(),
  user_path: z.string(),
  api_key_id: z.string().nullable(),
  api_key_name: z.string().nullable(),
  endpoint: z.string(),
  model_requested: z.string().nullable(),
  virtual_model: z.string().nullable(),
  attempts: z.array(attemptSchema),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  status: z.number().int(),
  error_type: z.string().nullable(),
  error_code: z.string().nullable(),
  rate_limit: z.object({ scope: z.string(), subject: z.string(), period: z.string(), kind: z.string() }).nullable(),
  latency_ms: z.number(),
  ttft_ms: z.number().nullable(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  cost_usd: z.number().nullable(),
  cache_hit: z.boolean(),
  stream: z.boolean(),
  user_agent: z.string().nullable(),
  guardrails: z
    .array(z.object({ name: z.string(), type: z.string(), action: z.enum(['redact', 'block']), mode: z.string(), stage: z.string() }))
    .nullable()
    .describe('the guardrail decisions of the request (monitor ones included); null when none'),
});
export const requestLogPageSchema = z.object({ requests: z.array(requestLogEntrySchema), next_cursor: z.string().nullable() });
export const requestLogDetailSchema = requestLogEntrySchema.extend({
  request_body: z.string().nullable(),
  response_body: z.string().nullable(),
});

export const requestStatsSchema = z.object({
  from: isoTime.nullable(),
  to: isoTime.nullable(),
  group_by: z.enum(['provider', 'model']),
  bucket: z.enum(['hour', 'day']).optional(),
  rows: z.number().int().describe('entries read (the newest of the range, at most 100,000)'),
  oldest: isoTime.nullable(),
  truncated: z.boolean(),
  groups: z.array(
    z.object({
      bucket: isoTime.nullable().optional(),
      key: z.string().nullable(),
      requests: z.number().int(),
      errors: z.number().int(),
      server_errors: z.number().int(),
      error_rate: z.number(),
      p50_latency_ms: z.number(),
      p95_latency_ms: z.number(),
    }),
  ),
});

export const virtualModelSchema = z.object({
  name: z.string(),
  description: z.string(),
  strategy: z.enum(['failover', 'round_robin', 'least_busy']),
  targets: z.array(z.object({ provider: z.string().nullable(), model: z.string(), weight: z.number() })),
  origin,
  created_at: isoTime.nullable(),
  updated_at: isoTime.nullable(),
});
export const virtualModelListSchema = z.array(virtualModelSchema);

export const failoverRuleSchema = z.object({
  model: z.string(),
  fallbacks: z.array(z.string()),
  on: z.array(z.string()),
  origin,
  created_at: isoTime.nullable(),
  updated_at: isoTime.nullable(),
});
export const failoverRuleListSchema = z.array(failoverRuleSchema);

const concreteModelRow = z.object({
  id: z.string(),
  kind: z.literal('concrete'),
  instance: z.string(),
  provider_type: z.string(),
  model: z.string(),
  pricing: z.object({ input_per_mtok: z.number(), output_per_mtok: z.number(), cached_input_per_mtok: z.number().nullable() }).nullable(),
  circuit: z.enum(['closed', 'open', 'half_open']),
  listing: z.enum(['configured', 'loading', 'ok', 'stale', 'unavailable']),
  available: z.boolean(),
});
const virtualModelRow = z.object({
  id: z.string(),
  kind: z.literal('virtual'),
  strategy: virtualModelSchema.shape.strategy,
  origin,
  targets: z.array(
    z.object({
      provider: z.string().nullable(),
      model: z.string(),
      weight: z.number(),
      resolved: z.string().nullable(),
      available: z.boolean(),
    }),
  ),
  available: z.boolean(),
});
export const adminModelRowSchema = z.discriminatedUnion('kind', [concreteModelRow, virtualModelRow]);
export const adminModelListSchema = z.array(adminModelRowSchema);

export const budgetSchema = z.object({
  user_path: z.string(),
  period: z.enum(['hourly', 'daily', 'weekly', 'monthly', 'custom']),
  period_seconds: z.number().int(),
  amount: z.number(),
  spent: z.number(),
  remaining: z.number(),
  period_start: isoTime.nullable(),
  period_end: isoTime.nullable(),
  origin,
});
export const budgetListSchema = z.object({ budgets: z.array(budgetSchema) });

/** One rule with its live usage (src/admin/rate-limits-routes.ts `renderRule`). */
export const rateLimitRuleSchema = z.object({
  scope: z.enum(['user_path', 'provider', 'model']),
  subject: z.string(),
  user_path: z.string().optional(),
  period: z.string(),
  period_seconds: z.number().int(),
  max_requests: z.number().int().nullable(),
  max_tokens: z.number().int().nullable(),
  origin,
  created_at: isoTime.nullable(),
  updated_at: isoTime.nullable(),
  window_start: isoTime.nullable(),
  window_end: isoTime.nullable(),
  requests_used: z.number().int(),
  requests_remaining: z.number().int().nullable(),
  tokens_used: z.number().int(),
  tokens_remaining: z.number().int().nullable(),
  in_flight: z.number().int(),
});
export type RateLimitRuleAnswer = z.output<typeof rateLimitRuleSchema>;
export const rateLimitListSchema = z.object({ rate_limits: z.array(rateLimitRuleSchema), server_time: isoTime });
export const statusOkSchema = z.object({ status: z.literal('ok') });

export const mcpServerSchema = z.object({
  name: z.string(),
  slug: z.string(),
  description: z.string(),
  transport: z.enum(['http', 'sse', 'stdio']),
  url: z.string().nullable(),
  headers: z.record(z.string(), z.string()).describe('values redacted as ***'),
  command: z.string().nullable(),
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()).describe('values redacted as ***'),
  enabled: z.boolean(),
  allowed_tools: z.array(z.string()),
  disallowed_tools: z.array(z.string()),
  user_paths: z.array(z.string()),
  tool_timeout_seconds: z.number(),
  managed: z.boolean(),
  origin,
  status: z.enum(['disabled', 'connecting', 'connected', 'error']),
  last_error: z.string().nullable(),
  connected_at: isoTime.nullable(),
  tool_count: z.number().int(),
  excluded_tool_count: z.number().int(),
  prompt_count: z.number().int(),
  resource_count: z.number().int(),
  created_at: isoTime.nullable(),
  updated_at: isoTime.nullable(),
});
export const mcpServerListSchema = z.array(mcpServerSchema);

const described = { description: z.string().optional() };
const toolFeatureSchema = z.object({
  name: z.string(),
  ...described,
  read_only: z.boolean().optional(),
  destructive: z.boolean().optional(),
});
export const mcpCatalogSchema = z.object({
  server: z.string(),
  status: mcpServerSchema.shape.status,
  instructions: z.string().optional(),
  tools: z.array(toolFeatureSchema),
  excluded_tools: z.array(toolFeatureSchema),
  prompts: z.array(z.object({ name: z.string(), ...described })),
  resources: z.array(z.object({ uri: z.string(), name: z.string().optional(), ...described })),
  templates: z.array(z.object({ uri_template: z.string(), name: z.string().optional(), ...described })),
});

export const mcpVirtualServerSchema = z.object({
  name: z.string(),
  description: z.string(),
  servers: z.array(z.string()),
  missing_servers: z.array(z.string()),
  conflict: z.string(),
  managed: z.boolean(),
  configured_tool_discovery: z.enum(['', 'off', 'search']),
  tool_discovery: z.enum(['off', 'search']),
});
export const mcpVirtualServerListSchema = z.array(mcpVirtualServerSchema);

export const whoamiSchema = z.object({
  kind: z.enum(['master', 'open', 'api_key', 'jwt']),
  role: z.enum(['admin', 'viewer']),
  key_id: z.string().nullable(),
});

/** What a render function returns: the output of its answer schema. */
export type AnswerOf<Schema extends z.ZodType> = z.output<Schema>;

const names = z.array(z.string());
/** A guardrail as GET /admin/guardrails shows it: its YAML entry with defaults, place and origin. */
export const guardrailViewSchema = z.object({
  name: z.string(),
  type: z.enum(['pii', 'secrets', 'deny_list', 'max_input_tokens', 'json_schema', 'moderation', 'webhook', 'custom']),
  mode: z.enum(['enforce', 'monitor']),
  applies_to: z.object({ user_paths: names, models: names, endpoints: names }),
  action: z.enum(['redact', 'block']).optional(),
  on: z.enum(['input', 'output', 'both']).optional(),
  replacement: z.string().optional(),
  entities: names.optional(),
  module: z.string().optional(),
  terms: names.optional(),
  patterns: names.optional(),
  max_tokens: z.number().int().optional(),
  provider: z.string().optional(),
  model: z.string().optional(),
  categories: names.optional(),
  url: z.string().optional(),
  secret_set: z.boolean().optional().describe('whether a webhook secret is stored (never shown)'),
  timeout_ms: z.number().int().optional(),
  retries: z.number().int().optional(),
  fail_open: z.boolean().optional(),
  position: z.number().int(),
  origin,
  managed: z.boolean(),
  created_at: isoTime.nullable(),
  updated_at: isoTime.nullable(),
});
export const guardrailListSchema = z.array(guardrailViewSchema);
