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

/** `POST /admin/reload` (src/lifecycle/config-reload.ts `ReloadOutcome`). */
export const reloadOutcomeSchema = z.object({ applied: z.array(z.string()), restart_needed: z.array(z.string()) });

/** An answer whose fields are not detailed here (this document itself, /v1/usage): an open object. */
export const openObjectSchema = z.looseObject({});

export type JsonSchema = Record<string, unknown>;

/**
 * A zod schema as JSON Schema draft 2020-12 (what OpenAPI 3.1 uses): as the gateway receives it
 * (`input`: objects stay open, unknown fields are ignored) or as it answers (`output`: objects
 * built with z.object are closed, `additionalProperties: false`).
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'input'): JsonSchema {
  const converted = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
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
