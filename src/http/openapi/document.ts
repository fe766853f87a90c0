import { errorEnvelopeSchema, jsonSchemaOf, type JsonSchema } from './schemas.ts';
import { operations, type OperationDescription } from './operations.ts';
import { describableMethods, type RegisteredRoute } from './route-list.ts';

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  servers: Array<{ url: string; description: string }>;
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Record<string, JsonSchema>>;
  components: JsonSchema;
  /** Routes the server registered that `operations` does not describe (`METHOD url`); absent when none. */
  'x-undocumented-routes'?: string[];
}

type Table = typeof operations;

/** The top-level tags, one per `OperationDescription['tag']` (linters want every tag used declared). */
const tagDescriptions: Record<OperationDescription['tag'], string> = {
  health: 'Liveness and readiness',
  models: 'Model endpoints in the OpenAI, Anthropic and Gemini dialects',
  relay: 'Endpoints relayed to a provider instance (files, batches, audio, images, passthrough)',
  mcp: 'Model Context Protocol servers',
  admin: 'Admin API (master key, or an admin or viewer key)',
  meta: 'This description, the dashboard and metrics',
};

/** Fastify's `/v1/files/:id` and `/p/:instance/*` as OpenAPI paths (`{id}`, `{path}`). */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}');
}

/**
 * The OpenAPI 3.1 document of the routes the server registered. HEAD routes Fastify adds for
 * each GET, and methods OpenAPI cannot name (Fastify's `all`), are left out.
 */
export function buildOpenApiDocument(routes: readonly RegisteredRoute[], version: string, table: Table = operations): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  const undocumented: string[] = [];
  for (const { method, url } of routes) {
    const lower = method.toLowerCase();
    if (!(describableMethods as readonly string[]).includes(lower) || lower === 'head') continue;
    const description = table[url]?.[method];
    if (description === undefined) {
      undocumented.push(`${method} ${url}`);
      continue;
    }
    const path = openApiPath(url);
    paths[path] = { ...paths[path], [lower]: operationOf(description, method, url) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Model Gateway',
      version,
      description: 'AI gateway: OpenAI, Anthropic and Gemini compatible model endpoints, relays, MCP and the admin API.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'This gateway' }],
    tags: Object.entries(tagDescriptions).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Master key, gateway API key or JWT' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The same key, as Anthropic clients send it' },
      },
      schemas: { ErrorEnvelope: jsonSchemaOf(errorEnvelopeSchema) },
      responses: {
        Error: {
          description: 'The error envelope (CONTRACT section 4)',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
        },
      },
    },
    ...(undocumented.length > 0 ? { 'x-undocumented-routes': undocumented } : {}),
  };
}

function operationOf(description: OperationDescription, method: string, url: string): JsonSchema {
  const parameters = [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => pathParameter(match[1] ?? 'id', false));
  if (url.endsWith('*')) parameters.push(pathParameter('path', true));
  return {
    summary: description.summary,
    operationId: operationId(method, url),
    tags: [description.tag],
    security: securityOf(description),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...requestBodyOf(description),
    // Every route can refuse (credentials, Host, body, unknown ids): the envelope for 4XX and the rest.
    responses: {
      [String(description.status ?? 200)]: answerOf(description),
      '4XX': { $ref: '#/components/responses/Error' },
      default: { $ref: '#/components/responses/Error' },
    },
  };
}

function pathParameter(name: string, rest: boolean): JsonSchema {
  return {
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
    ...(rest ? { description: 'the rest of the path; may contain `/`' } : {}),
  };
}

/** `getV1FilesId` for `GET /v1/files/:id`; a trailing `*` is the word `Path` (as its `{path}` parameter), so `/v1/models` and `/v1/models/*` differ. */
export function operationId(method: string, url: string): string {
  const words = openApiPath(url)
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '');
  return [method.toLowerCase(), ...words.map((word) => word[0]?.toUpperCase() + word.slice(1))].join('');
}

function securityOf(description: OperationDescription): JsonSchema[] {
  if (description.access === 'public') return [];
  if (description.access === 'master') return [{ bearerAuth: [] }];
  return [{ bearerAuth: [] }, { apiKeyHeader: [] }];
}

function requestBodyOf(description: OperationDescription): JsonSchema {
  if (description.body !== undefined) {
    const content = { 'application/json': { schema: jsonSchemaOf(description.body) } };
    return { requestBody: { required: description.bodyOptional !== true, content } };
  }
  if (description.bodyType !== undefined) {
    return { requestBody: { content: { [description.bodyType]: { schema: {} } } } };
  }
  return {};
}

function answerOf(description: OperationDescription): JsonSchema {
  const content: JsonSchema = {};
  if (description.answer !== undefined) content['application/json'] = { schema: jsonSchemaOf(description.answer, 'output') };
  if (description.answerType !== undefined) content[description.answerType] = { schema: {} };
  if (description.streams === true) content['text/event-stream'] = { schema: { type: 'string' } };
  return { description: description.summary, ...(Object.keys(content).length > 0 ? { content } : {}) };
}
