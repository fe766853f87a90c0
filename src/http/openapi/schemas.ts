import { z } from 'zod';

/**
 * The shapes the gateway itself produces or reads, as zod schemas turned into JSON Schema for
 * GET /openapi.json. Bodies forwarded to providers (OpenAI, Anthropic, Gemini) are described
 * by the fields the gateway reads only, and stay open (`additionalProperties: true`).
 */

/** CONTRACT section 4: every error the gateway answers. */
export const errorEnvelopeSchema = z.object({
  error: z.object({
    type: z.string(),
    message: z.string(),
    code: z.string().nullable(),
    param: z.string().nullable(),
    provider: z.string(),
    status_code: z.number().int(),
  }),
});

/** What the model pipeline reads from a JSON body (src/gateway/model-fields.ts); the rest is forwarded. */
export const modelRequestSchema = z.looseObject({
  model: z.string().min(1).describe('`<instance>/<model>`, a bare model id, or a virtual model name'),
  provider: z.string().min(1).optional().describe('routing hint: the provider instance to use'),
  stream: z.boolean().optional().describe('answer as server-sent events'),
});

/** A forwarded answer: the provider's shape, kept open. */
export const forwardedBodySchema = z.looseObject({});

export const healthSchema = z.object({ status: z.literal('ok') });

const componentSchema = z.looseObject({ status: z.enum(['up', 'down']) });

export const readinessSchema = z.object({
  status: z.enum(['ready', 'degraded', 'not_ready']),
  components: z.looseObject({
    storage: componentSchema,
    models: componentSchema,
    response_cache: componentSchema.optional(),
    rate_limits: componentSchema.optional(),
  }),
});

export const modelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(z.looseObject({ id: z.string(), object: z.literal('model'), owned_by: z.string() })),
});

const isoTime = z.string().describe('ISO 8601 time');

/** One rule with its live usage (src/admin/rate-limits-routes.ts `renderRule`). */
export const rateLimitRuleSchema = z.object({
  scope: z.enum(['user_path', 'provider', 'model']),
  subject: z.string(),
  user_path: z.string().optional(),
  period: z.string(),
  period_seconds: z.number().int(),
  max_requests: z.number().int().nullable(),
  max_tokens: z.number().int().nullable(),
  origin: z.string(),
  created_at: isoTime,
  updated_at: isoTime,
  window_start: isoTime.nullable(),
  window_end: isoTime.nullable(),
  requests_used: z.number().int(),
  requests_remaining: z.number().int().nullable(),
  tokens_used: z.number().int(),
  tokens_remaining: z.number().int().nullable(),
  in_flight: z.number().int(),
});

export const rateLimitListSchema = z.object({ rate_limits: z.array(rateLimitRuleSchema), server_time: isoTime });

const period = z.union([z.object({ period: z.string() }), z.object({ period_seconds: z.number().int().min(0) })]);

export const rateLimitPutSchema = z.object({
  scope: z.enum(['user_path', 'provider', 'model']).optional(),
  subject: z.string().optional(),
  user_path: z.string().optional(),
  limit_key: period,
  max_requests: z.number().int().positive().nullable().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
});

export const rateLimitKeySchema = z.object({
  scope: z.enum(['user_path', 'provider', 'model']).optional(),
  subject: z.string().optional(),
  user_path: z.string().optional(),
  limit_key: period.optional(),
  period: z.string().optional(),
  period_seconds: z.number().int().optional(),
});

export const confirmationSchema = z.object({ confirmation: z.literal('reset') });

/** `POST /admin/reload` (src/lifecycle/config-reload.ts `ReloadOutcome`). */
export const reloadOutcomeSchema = z.object({ applied: z.array(z.string()), restart_needed: z.array(z.string()) });

/** Admin list answers not detailed here: an object (their fields are in CONTRACT section 6). */
export const adminAnswerSchema = z.looseObject({});

export type JsonSchema = Record<string, unknown>;

/** A zod schema as JSON Schema draft 2020-12 (what OpenAPI 3.1 uses), as the gateway receives it. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const converted = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
    // Open objects as `additionalProperties: true` (zod writes the equivalent `{}`).
    override: ({ jsonSchema }) => {
      const extra = jsonSchema.additionalProperties;
      if (typeof extra === 'object' && Object.keys(extra).length === 0) jsonSchema.additionalProperties = true;
    },
  }) as JsonSchema;
  delete converted['$schema'];
  return converted;
}
