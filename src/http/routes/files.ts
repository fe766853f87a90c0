import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidRequest } from '../../errors/gateway-error.ts';
import { boundaryOf, editForm, fieldOf, readForm } from '../../gateway/relay/multipart.ts';
import { chooseResourceInstance, forwardResource, resourcePath, splitQuery, type ResourceRequest } from '../../gateway/relay/resources.ts';
import type { RequestContext } from '../../gateway/request-context.ts';
import type { Admission } from '../../ratelimit/rate-limiter.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { requestContextOf } from '../request-context.ts';
import { contentHeadersOf, relayToClient } from './relay-reply.ts';

interface FileParams {
  id: string;
}

/**
 * OpenAI's Files API relayed to one instance (resources.ts says which). Uploads and reads
 * are not model calls: they are authenticated but count against no rate limit or budget,
 * and record no usage.
 */
export function registerFileRoutes(app: FastifyInstance, catalog: ModelCatalog): void {
  app.post('/v1/files', async (request, reply) => {
    if (!Buffer.isBuffer(request.body)) throw invalidRequest('expected a multipart/form-data body with a file', { code: 'invalid_body' });
    const contentType = request.headers['content-type'];
    const form = readForm(request.body, boundaryOf(contentType));
    const field = fieldOf(form, 'provider');
    const body = editForm(form, { drop: ['provider'] });
    const resource = { method: 'POST', path: 'files', headers: { 'content-type': contentType as string }, body } as const;
    return relayResource(request, reply, catalog, resource, { bodyHint: field });
  });
  app.get('/v1/files', (request, reply) => relayResource(request, reply, catalog, { method: 'GET', path: 'files' }));
  app.get<{ Params: FileParams }>('/v1/files/:id', (request, reply) =>
    relayResource(request, reply, catalog, { method: 'GET', path: resourcePath('files', request.params.id) }),
  );
  app.delete<{ Params: FileParams }>('/v1/files/:id', (request, reply) =>
    relayResource(request, reply, catalog, { method: 'DELETE', path: resourcePath('files', request.params.id) }),
  );
  app.get<{ Params: FileParams }>('/v1/files/:id/content', (request, reply) =>
    relayResource(request, reply, catalog, { method: 'GET', path: resourcePath('files', request.params.id, 'content') }),
  );
}

export interface RelayOptions {
  /** The body's `provider` field, which wins over the query's. */
  bodyHint?: string | undefined;
  /** Admission of a counted request (batch submission), once the instance is known. */
  admit?: (context: RequestContext) => Promise<Admission>;
}

/**
 * Relays one files or batches request: the instance chosen by the body's `provider` field,
 * else the query's, else the default; the query string is kept without the hint; the
 * answer is streamed back with its status and content headers.
 */
export async function relayResource(
  request: FastifyRequest,
  reply: FastifyReply,
  catalog: ModelCatalog,
  resource: ResourceRequest,
  options: RelayOptions = {},
): Promise<FastifyReply> {
  const context = requestContextOf(request, reply);
  const { hint, query } = splitQuery(request.url);
  const bodyHint = options.bodyHint === '' ? undefined : options.bodyHint;
  const adapter = chooseResourceInstance(catalog, bodyHint ?? hint);
  request.logFields = { provider: adapter.name };
  if (options.admit !== undefined) reply.headers((await options.admit(context)).headers);
  const response = await forwardResource(adapter, { ...resource, path: `${resource.path}${query}` }, context).catch((error: unknown) => {
    throw context.signal.aborted ? clientClosedRequest() : error;
  });
  await relayToClient(request, reply, response, contentHeadersOf(response.headers), context.signal);
  return reply;
}
