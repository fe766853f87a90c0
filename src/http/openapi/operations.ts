import { z } from 'zod';
import * as answers from '../../admin/schemas/answers.ts';
import * as bodies from '../../admin/schemas/bodies.ts';
import { catalogue } from '../../gateway/relay/openai-resources.ts';
import { guardrailEntrySchema } from '../../guardrails/guardrail-settings.ts';
import {
  forwardedBodySchema,
  healthSchema,
  modelListSchema,
  modelRequestSchema,
  openObjectSchema,
  readinessSchema,
  reloadOutcomeSchema,
} from './schemas.ts';

/** Who may call a route: nobody needs a key, a gateway key (or JWT), or the master key. */
export type Access = 'public' | 'key' | 'master';

/** How a route answers: JSON of a known shape, a forwarded provider answer, or something else. */
export interface OperationDescription {
  summary: string;
  tag: 'health' | 'models' | 'relay' | 'mcp' | 'admin' | 'meta';
  access: Access;
  /** JSON request body (absent: none, or not JSON). */
  body?: z.ZodType;
  /** The JSON body may be left out. */
  bodyOptional?: boolean;
  /** Request body media type other than JSON (multipart uploads). */
  bodyType?: string;
  /** The success answer (a closed object when built with z.object). */
  answer?: z.ZodType;
  /** The success status when not 200 (201 created, 204 no content). */
  status?: 201 | 204;
  /** Media type of the 200 answer when not JSON. */
  answerType?: string;
  /** Answers with server-sent events when the body asks `stream: true`. */
  streams?: boolean;
}

const model = (summary: string, extra: Partial<OperationDescription> = {}): OperationDescription => ({
  summary,
  tag: 'models',
  access: 'key',
  body: modelRequestSchema,
  answer: forwardedBodySchema,
  streams: true,
  ...extra,
});
const relay = (summary: string, extra: Partial<OperationDescription> = {}): OperationDescription => ({
  summary,
  tag: 'relay',
  access: 'key',
  answer: forwardedBodySchema,
  ...extra,
});
const admin = (summary: string, answer: z.ZodType | undefined, extra: Partial<OperationDescription> = {}): OperationDescription => ({
  summary,
  tag: 'admin',
  access: 'master',
  ...(answer === undefined ? {} : { answer }),
  ...extra,
});
const deleted = (summary: string, body?: z.ZodType): OperationDescription =>
  admin(summary, undefined, { status: 204, ...(body === undefined ? {} : { body }) });

// Bodies checked by validators the YAML configuration shares (src/routing/*-validation.ts,
// src/mcp/mcp-validation.ts) are described here by the writable fields of their answer.
const virtualModelBody = answers.virtualModelSchema
  .pick({ name: true, description: true, strategy: true })
  .partial({ description: true, strategy: true })
  .extend({
    targets: z.array(z.object({ provider: z.string().nullable().optional(), model: z.string(), weight: z.number().optional() })),
  });
const failoverRuleBody = answers.failoverRuleSchema.pick({ model: true, fallbacks: true, on: true }).partial({ on: true });
const modelBody = z.object({ model: z.string().describe('or `?model=`') });
const mcpServerBody = answers.mcpServerSchema
  .pick({ name: true, description: true, transport: true, url: true, headers: true, enabled: true, allowed_tools: true })
  .extend(answers.mcpServerSchema.pick({ disallowed_tools: true, user_paths: true, tool_timeout_seconds: true }).shape)
  .extend({ slug: z.string().optional().describe('instead of name') })
  .partial();
const mcpVirtualServerBody = answers.mcpVirtualServerSchema
  .pick({ name: true, description: true, servers: true, configured_tool_discovery: true })
  .partial({ description: true, configured_tool_discovery: true });
const mcp = (summary: string): OperationDescription => ({ summary, tag: 'mcp', access: 'key', answerType: 'application/json' });
const passthrough = relay('Passthrough to a provider instance: the request is forwarded as is', { bodyType: '*/*', answerType: '*/*' });
const passthroughMethods = Object.fromEntries(
  ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'].map((method) => [method, passthrough]),
);
const multipart = 'multipart/form-data';

/** The routes described one by one (the catalogue's are added below). */
type OperationTable = Readonly<Record<string, Readonly<Partial<Record<string, OperationDescription>>>>>;

const described: OperationTable = {
  '/openapi.json': { GET: { summary: 'This OpenAPI 3.1 description', tag: 'meta', access: 'public', answer: openObjectSchema } },
  '/health': { GET: { summary: 'Liveness', tag: 'health', access: 'public', answer: healthSchema } },
  '/health/ready': {
    GET: {
      summary: 'Readiness: storage, models, cache, shared counters (503 when storage is down)',
      tag: 'health',
      access: 'public',
      answer: readinessSchema,
    },
  },
  '/dashboard': {
    GET: {
      summary: 'Admin dashboard (static page; its API calls need the master key)',
      tag: 'meta',
      access: 'public',
      answerType: 'text/html',
    },
  },
  '/dashboard/*': { GET: { summary: 'Dashboard assets', tag: 'meta', access: 'public', answerType: '*/*' } },
  '/metrics': {
    GET: {
      summary: 'Prometheus metrics (METRICS_ENABLED); public unless METRICS_AUTH=true (master key, admin or viewer key)',
      tag: 'meta',
      access: 'public',
      answerType: 'text/plain',
    },
  },
  '/v1/models': {
    GET: { summary: 'List models: `<instance>/<model>` and virtual models', tag: 'models', access: 'key', answer: modelListSchema },
  },
  '/v1/models/*': {
    GET: { summary: 'Retrieve one model (the id may contain `/`)', tag: 'models', access: 'key', answer: forwardedBodySchema },
    POST: model('Gemini dialect on /v1: `models/{model}:generateContent` and friends'),
  },
  '/v1/chat/completions': { POST: model('OpenAI chat completions, routed by `model`') },
  '/v1/embeddings': { POST: model('OpenAI embeddings', { streams: false }) },
  '/v1/responses': { POST: model('OpenAI Responses API') },
  '/v1/responses/:id': {
    GET: relay('Retrieve a stored response'),
    DELETE: relay('Delete a stored response'),
  },
  '/v1/responses/:id/input_items': { GET: relay('Input items of a stored response') },
  '/v1/messages': { POST: model('Anthropic Messages API') },
  '/v1/messages/count_tokens': { POST: model('Anthropic token counting', { streams: false }) },
  '/v1/messages/batches': {
    POST: relay('Anthropic: create a message batch (owned; metered at admission, charged when ended)', { body: forwardedBodySchema }),
    GET: relay("Anthropic: list the caller's message batches"),
  },
  '/v1/messages/batches/:id': { GET: relay('Anthropic: retrieve a message batch'), DELETE: relay('Anthropic: delete a message batch') },
  '/v1/messages/batches/:id/cancel': { POST: relay('Anthropic: cancel a message batch') },
  '/v1/messages/batches/:id/results': {
    GET: relay('Anthropic: results of an ended message batch (JSONL)', { answer: undefined, answerType: '*/*' }),
  },
  '/v1beta/models': { GET: { summary: 'Gemini dialect: list models', tag: 'models', access: 'key', answer: forwardedBodySchema } },
  '/v1beta/models/*': {
    GET: { summary: 'Gemini dialect: one model', tag: 'models', access: 'key', answer: forwardedBodySchema },
    POST: model('Gemini dialect: `models/{model}:generateContent`, `:streamGenerateContent`, `:countTokens`, `:embedContent`', {
      body: forwardedBodySchema,
    }),
  },
  '/upload/v1beta/files': {
    POST: relay('Gemini: resumable file upload (start, then the bytes to the gateway URL it answers)', {
      answer: undefined,
      answerType: '*/*',
    }),
  },
  '/v1beta/files': { GET: relay("Gemini: list the caller's files") },
  '/v1beta/files/:name': { GET: relay('Gemini: one file'), DELETE: relay('Gemini: delete a file') },
  '/v1beta/cachedContents': {
    POST: relay('Gemini: create a cached content (owned; metered at admission)', { body: forwardedBodySchema }),
    GET: relay("Gemini: list the caller's cached contents"),
  },
  '/v1beta/cachedContents/:name': {
    GET: relay('Gemini: one cached content'),
    PATCH: relay('Gemini: update a cached content (ttl, expireTime)', { body: forwardedBodySchema }),
    DELETE: relay('Gemini: delete a cached content'),
  },
  '/v1/audio/speech': {
    POST: model('Text to speech (relayed; audio answer)', { streams: false, answer: undefined, answerType: 'audio/*' }),
  },
  '/v1/audio/transcriptions': { POST: relay('Speech to text (multipart, routed by its `model` field)', { bodyType: multipart }) },
  '/v1/audio/translations': { POST: relay('Speech translation (multipart, routed by its `model` field)', { bodyType: multipart }) },
  '/v1/completions': { POST: model('Legacy completions (relayed)') },
  '/v1/moderations': { POST: model('Moderations (relayed)', { streams: false }) },
  '/v1/images/generations': { POST: model('Image generation (relayed)', { streams: false }) },
  '/v1/images/edits': { POST: relay('Image edits (multipart)', { bodyType: multipart }) },
  '/v1/images/variations': { POST: relay('Image variations (multipart)', { bodyType: multipart }) },
  '/v1/files': { POST: relay('Upload a file (multipart)', { bodyType: multipart }), GET: relay('List files') },
  '/v1/files/:id': { GET: relay('Retrieve a file'), DELETE: relay('Delete a file') },
  '/v1/files/:id/content': { GET: relay('File content', { answer: undefined, answerType: '*/*' }) },
  '/v1/batches': { POST: relay('Create a batch', { body: forwardedBodySchema }), GET: relay('List batches') },
  '/v1/batches/:id': { GET: relay('Retrieve a batch') },
  '/v1/batches/:id/cancel': { POST: relay('Cancel a batch') },
  '/v1/realtime': { GET: relay('Realtime API: WebSocket upgrade (`?model=`), relayed', { answer: undefined }) },
  '/v1/usage': { GET: { summary: "The caller's own usage, budgets and limits", tag: 'models', access: 'key', answer: openObjectSchema } },
  '/p/:instance': passthroughMethods,
  '/p/:instance/*': passthroughMethods,
  '/mcp': { GET: mcp('MCP Streamable HTTP: all servers'), POST: mcp('MCP JSON-RPC: all servers'), DELETE: mcp('End an MCP session') },
  '/mcp/:name': {
    GET: mcp('MCP Streamable HTTP: one server or virtual server'),
    POST: mcp('MCP JSON-RPC: one server or virtual server'),
    DELETE: mcp('End an MCP session'),
  },
  '/admin/api-keys': {
    POST: admin('Create an API key (its secret is shown once)', answers.apiKeyWithSecretSchema, {
      body: bodies.apiKeyCreateSchema,
      status: 201,
    }),
    GET: admin(
      'List API keys, each with last_used_at, requests and cost_usd over `window` (24h, 7d, 30d; default 30d)',
      answers.apiKeyListSchema,
    ),
  },
  '/admin/api-keys/:id': {
    PATCH: admin('Change an API key (allowed models and endpoints, role)', answers.apiKeySchema, { body: bodies.apiKeyPatchSchema }),
  },
  '/admin/api-keys/:id/deactivate': { POST: admin('Deactivate an API key', answers.apiKeySchema) },
  '/admin/api-keys/:id/rotate': {
    POST: admin('Rotate an API key: a new secret, the old one kept for grace_seconds', answers.apiKeyWithSecretSchema, {
      body: bodies.apiKeyRotateSchema,
      bodyOptional: true,
    }),
  },
  '/admin/whoami': { GET: admin('The presented admin credential: {kind, role (admin or viewer), key_id}', answers.whoamiSchema) },
  '/admin/audit': {
    GET: admin('The admin audit trail (filters from, to, actor, action, resource; cursor pages)', answers.auditPageSchema),
  },
  '/admin/usage': { GET: admin('Usage report (grouped, time range)', answers.usageReportSchema) },
  '/admin/requests': { GET: admin('Request log (filters, cursor)', answers.requestLogPageSchema) },
  '/admin/requests/:id': { GET: admin('One request log entry', answers.requestLogDetailSchema) },
  '/admin/requests/stats': {
    GET: admin(
      'Request count, error rate and p50/p95 latency per provider or model (from, to, group_by, bucket)',
      answers.requestStatsSchema,
    ),
  },
  '/admin/virtual-models': {
    GET: admin('List virtual models', answers.virtualModelListSchema),
    PUT: admin('Create or replace a virtual model', answers.virtualModelSchema, { body: virtualModelBody }),
    DELETE: admin('Delete a virtual model', answers.virtualModelListSchema, { body: bodies.nameBodySchema }),
  },
  '/admin/failover-rules': {
    GET: admin('List failover rules', answers.failoverRuleListSchema),
    PUT: admin('Create or replace a failover rule', answers.failoverRuleSchema, { body: failoverRuleBody }),
    DELETE: admin('Delete a failover rule', answers.failoverRuleListSchema, { body: modelBody, bodyOptional: true }),
  },
  '/admin/guardrails': {
    GET: admin('List guardrails in evaluation order (configuration ones first, read-only)', answers.guardrailListSchema),
    PUT: admin('Create or replace a stored guardrail (the YAML entry shape)', answers.guardrailViewSchema, {
      body: guardrailEntrySchema,
    }),
    DELETE: admin('Delete a stored guardrail (name in the body or the query)', answers.guardrailListSchema, {
      body: bodies.nameBodySchema,
      bodyOptional: true,
    }),
  },
  '/admin/guardrails/:name': { GET: admin('One guardrail', answers.guardrailViewSchema) },
  '/admin/models': { GET: admin('Models per provider instance, with listing state', answers.adminModelListSchema) },
  '/admin/budgets': {
    GET: admin('List budgets with spend', answers.budgetListSchema),
    PUT: admin('Create or replace a budget', answers.budgetListSchema, { body: bodies.budgetPutSchema }),
    DELETE: admin('Delete a budget', answers.budgetListSchema, { body: bodies.budgetKeySchema }),
  },
  '/admin/rate-limits': {
    GET: admin('List rate-limit rules with live usage', answers.rateLimitListSchema),
    PUT: admin('Create or replace a rate-limit rule', answers.rateLimitListSchema, { body: bodies.rateLimitPutSchema }),
    DELETE: admin('Delete a rate-limit rule', answers.rateLimitListSchema, { body: bodies.rateLimitDeleteSchema }),
  },
  '/admin/rate-limits/reset-one': {
    POST: admin("Reset one rule's counters", answers.rateLimitListSchema, { body: bodies.rateLimitResetOneSchema }),
  },
  '/admin/rate-limits/reset': { POST: admin('Reset every counter', answers.statusOkSchema, { body: bodies.confirmationSchema }) },
  '/admin/mcp-servers': {
    GET: admin('List MCP servers', answers.mcpServerListSchema),
    PUT: admin('Create or replace an MCP server', answers.mcpServerSchema, { body: mcpServerBody }),
    DELETE: deleted('Delete an MCP server', z.object({ slug: z.string().optional(), name: z.string().optional() })),
  },
  '/admin/mcp-servers/:slug': { DELETE: deleted('Delete an MCP server') },
  '/admin/mcp-servers/:slug/reconnect': { POST: admin('Reconnect an MCP server', answers.mcpServerSchema) },
  '/admin/mcp-servers/:slug/catalog': { GET: admin("An MCP server's tools, prompts and resources", answers.mcpCatalogSchema) },
  '/admin/mcp-virtual-servers': {
    GET: admin('List MCP virtual servers', answers.mcpVirtualServerListSchema),
    PUT: admin('Create or replace an MCP virtual server', answers.mcpVirtualServerSchema, { body: mcpVirtualServerBody }),
    DELETE: deleted('Delete an MCP virtual server', bodies.nameBodySchema),
  },
  '/admin/mcp-virtual-servers/:name': { DELETE: deleted('Delete an MCP virtual server') },
  '/admin/reload': { POST: admin('Hot reload: re-read the configuration file and apply it', reloadOutcomeSchema) },
};

/** The catalogue's OpenAI resources (one owned relay, http/routes/owned-relay.ts) added to the described routes. */
function withCatalogue(table: OperationTable): OperationTable {
  const merged: Record<string, Partial<Record<string, OperationDescription>>> = {};
  for (const [path, methods] of Object.entries(table)) merged[path] = { ...methods };
  for (const route of catalogue) {
    const summary = `OpenAI resource relayed to one instance, owned per tenant: ${route.method} ${route.path.slice('/v1'.length)}`;
    merged[route.path] = { ...merged[route.path], [route.method]: relay(summary, { answerType: '*/*' }) };
  }
  return merged;
}

/**
 * Every route the gateway serves, by Fastify URL pattern and method. A route registered
 * without an entry here shows up as `x-undocumented-routes` in the document (and fails its test).
 */
export const operations: OperationTable = withCatalogue(described);
