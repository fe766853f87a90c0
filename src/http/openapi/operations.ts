import type { z } from 'zod';
import {
  adminAnswerSchema,
  confirmationSchema,
  forwardedBodySchema,
  healthSchema,
  modelListSchema,
  modelRequestSchema,
  rateLimitKeySchema,
  rateLimitListSchema,
  rateLimitPutSchema,
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
  /** Request body media type other than JSON (multipart uploads). */
  bodyType?: string;
  /** The 200 answer. */
  answer?: z.ZodType;
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
const admin = (summary: string, extra: Partial<OperationDescription> = {}): OperationDescription => ({
  summary,
  tag: 'admin',
  access: 'master',
  answer: adminAnswerSchema,
  ...extra,
});
const adminBody = (summary: string): OperationDescription => admin(summary, { body: adminAnswerSchema });
const mcp = (summary: string): OperationDescription => ({ summary, tag: 'mcp', access: 'key', answerType: 'application/json' });
const passthrough = relay('Passthrough to a provider instance: the request is forwarded as is', { bodyType: '*/*', answerType: '*/*' });
const passthroughMethods = Object.fromEntries(
  ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'].map((method) => [method, passthrough]),
);
const multipart = 'multipart/form-data';

/**
 * Every route the gateway serves, by Fastify URL pattern and method. A route registered
 * without an entry here shows up as `x-undocumented-routes` in the document (and fails its test).
 */
export const operations: Readonly<Record<string, Readonly<Partial<Record<string, OperationDescription>>>>> = {
  '/openapi.json': { GET: { summary: 'This OpenAPI 3.1 description', tag: 'meta', access: 'public', answer: adminAnswerSchema } },
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
  '/metrics': { GET: { summary: 'Prometheus metrics (METRICS_ENABLED)', tag: 'meta', access: 'public', answerType: 'text/plain' } },
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
  '/v1beta/models': { GET: { summary: 'Gemini dialect: list models', tag: 'models', access: 'key', answer: forwardedBodySchema } },
  '/v1beta/models/*': {
    GET: { summary: 'Gemini dialect: one model', tag: 'models', access: 'key', answer: forwardedBodySchema },
    POST: model('Gemini dialect: `models/{model}:generateContent`, `:streamGenerateContent`, `:countTokens`, `:embedContent`', {
      body: forwardedBodySchema,
    }),
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
  '/v1/usage': { GET: { summary: "The caller's own usage, budgets and limits", tag: 'models', access: 'key', answer: adminAnswerSchema } },
  '/p/:instance': passthroughMethods,
  '/p/:instance/*': passthroughMethods,
  '/mcp': { GET: mcp('MCP Streamable HTTP: all servers'), POST: mcp('MCP JSON-RPC: all servers'), DELETE: mcp('End an MCP session') },
  '/mcp/:name': {
    GET: mcp('MCP Streamable HTTP: one server or virtual server'),
    POST: mcp('MCP JSON-RPC: one server or virtual server'),
    DELETE: mcp('End an MCP session'),
  },
  '/admin/api-keys': { POST: adminBody('Create an API key (its secret is shown once)'), GET: admin('List API keys') },
  '/admin/api-keys/:id': { PATCH: adminBody('Change an API key (allowed models and endpoints, role)') },
  '/admin/api-keys/:id/deactivate': { POST: admin('Deactivate an API key') },
  '/admin/api-keys/:id/rotate': { POST: adminBody('Rotate an API key: a new secret, the old one kept for grace_seconds') },
  '/admin/whoami': { GET: admin('The presented admin credential: {kind, role (admin or viewer), key_id}') },
  '/admin/audit': { GET: admin('The admin audit trail (filters from, to, actor, action, resource; cursor pages)') },
  '/admin/usage': { GET: admin('Usage report (grouped, time range)') },
  '/admin/requests': { GET: admin('Request log (filters, cursor)') },
  '/admin/requests/:id': { GET: admin('One request log entry') },
  '/admin/virtual-models': {
    GET: admin('List virtual models'),
    PUT: adminBody('Create or replace a virtual model'),
    DELETE: adminBody('Delete a virtual model'),
  },
  '/admin/failover-rules': {
    GET: admin('List failover rules'),
    PUT: adminBody('Create or replace a failover rule'),
    DELETE: adminBody('Delete a failover rule'),
  },
  '/admin/guardrails': {
    GET: admin('List guardrails in evaluation order (configuration ones first, read-only)'),
    PUT: adminBody('Create or replace a stored guardrail (the YAML entry shape)'),
    DELETE: adminBody('Delete a stored guardrail (name in the body or the query)'),
  },
  '/admin/guardrails/:name': { GET: admin('One guardrail') },
  '/admin/models': { GET: admin('Models per provider instance, with listing state') },
  '/admin/budgets': {
    GET: admin('List budgets with spend'),
    PUT: adminBody('Create or replace a budget'),
    DELETE: adminBody('Delete a budget'),
  },
  '/admin/rate-limits': {
    GET: admin('List rate-limit rules with live usage', { answer: rateLimitListSchema }),
    PUT: admin('Create or replace a rate-limit rule', { body: rateLimitPutSchema, answer: rateLimitListSchema }),
    DELETE: admin('Delete a rate-limit rule', { body: rateLimitKeySchema, answer: rateLimitListSchema }),
  },
  '/admin/rate-limits/reset-one': { POST: admin("Reset one rule's counters", { body: rateLimitKeySchema, answer: rateLimitListSchema }) },
  '/admin/rate-limits/reset': { POST: admin('Reset every counter', { body: confirmationSchema, answer: rateLimitListSchema }) },
  '/admin/mcp-servers': {
    GET: admin('List MCP servers'),
    PUT: adminBody('Create or replace an MCP server'),
    DELETE: adminBody('Delete an MCP server'),
  },
  '/admin/mcp-servers/:slug': { DELETE: admin('Delete an MCP server') },
  '/admin/mcp-servers/:slug/reconnect': { POST: admin('Reconnect an MCP server') },
  '/admin/mcp-servers/:slug/catalog': { GET: admin("An MCP server's tools, prompts and resources") },
  '/admin/mcp-virtual-servers': {
    GET: admin('List MCP virtual servers'),
    PUT: adminBody('Create or replace an MCP virtual server'),
    DELETE: adminBody('Delete an MCP virtual server'),
  },
  '/admin/mcp-virtual-servers/:name': { DELETE: admin('Delete an MCP virtual server') },
  '/admin/reload': { POST: admin('Hot reload: re-read the configuration file and apply its rules', { answer: reloadOutcomeSchema }) },
};
