import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../../errors/gateway-error.ts';
import { betaSignalsOf } from '../../gateway/responses/beta-signals.ts';
import { forwardResource, resourcePath, splitQuery } from '../../gateway/relay/resources.ts';
import { seesAll } from '../../ownership/visibility.ts';
import type { PageQuery } from '../../responses/input-items-page.ts';
import type { ResponseState } from '../../responses/response-state.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { requestContextOf } from '../request-context.ts';
import { contentHeadersOf, relayToClient } from './relay-reply.ts';

type IdRequest = FastifyRequest<{ Params: { id: string }; Querystring: PageQuery }>;
type Operation = 'retrieve' | 'input_items' | 'delete';

/**
 * `GET /v1/responses/{id}`, `GET /v1/responses/{id}/input_items` and `DELETE
 * /v1/responses/{id}`: served from the gateway's store for responses it created through the
 * chat translation, forwarded to the native instance that created one otherwise (the gateway
 * remembers which), a 404 `response_not_found` for anything else. Not model calls: no
 * limits, budgets or usage.
 */
export function registerStoredResponseRoutes(app: FastifyInstance, state: ResponseState | null, catalog: ModelCatalog): void {
  const serve =
    (operation: Operation) =>
    async (request: IdRequest, reply: FastifyReply): Promise<unknown> => {
      const { id } = request.params;
      if (state === null) throw notFound(`Response with id '${id}' not found.`, { code: 'response_not_found' });
      // Admin-role keys see every tenant's responses (ADR 28).
      const viewer = seesAll(request) ? '/' : request.userPath;
      const instance = await state.nativeInstance(id, viewer);
      if (instance !== null) return forwardToInstance(request, reply, { catalog, state, instance, operation });
      if (operation === 'retrieve') return state.retrieve(id, viewer);
      if (operation === 'input_items') return state.inputItems(id, viewer, request.query);
      return state.remove(id, viewer);
    };
  app.get('/v1/responses/:id', serve('retrieve'));
  app.get('/v1/responses/:id/input_items', serve('input_items'));
  app.delete('/v1/responses/:id', serve('delete'));
}

interface Forward {
  catalog: ModelCatalog;
  state: ResponseState;
  instance: string;
  operation: Operation;
}

async function forwardToInstance(request: IdRequest, reply: FastifyReply, forward: Forward): Promise<FastifyReply> {
  const { id } = request.params;
  const adapter = forward.catalog.instances.get(forward.instance)?.adapter;
  // The instance is no longer configured: what it holds cannot be reached.
  if (adapter === undefined) throw notFound(`Response with id '${id}' not found.`, { code: 'response_not_found' });
  request.logFields = { provider: adapter.name };
  const context = requestContextOf(request, reply);
  const rest = forward.operation === 'input_items' ? ['input_items'] : [];
  const path = `${resourcePath('responses', id, ...rest)}${splitQuery(request.url).query}`;
  const method = forward.operation === 'delete' ? 'DELETE' : 'GET';
  const { headers } = betaSignalsOf(request.headers['openai-beta'], '');
  const response = await forwardResource(adapter, { method, path, headers: { ...headers } }, context).catch((error: unknown) => {
    throw context.signal.aborted ? clientClosedRequest() : error;
  });
  if (method === 'DELETE') await forward.state.forget(id);
  await relayToClient(request, reply, response, contentHeadersOf(response.headers), context.abort);
  return reply;
}
