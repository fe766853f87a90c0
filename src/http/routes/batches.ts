import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../../errors/gateway-error.ts';
import { admitRequest } from '../../gateway/execute-plan.ts';
import type { ChatPipelineDependencies } from '../../gateway/chat-completions.ts';
import { resourcePath } from '../../gateway/relay/resources.ts';
import { jsonBodyOf } from '../json-body.ts';
import { relayResource } from './files.ts';

interface BatchParams {
  id: string;
}

/**
 * OpenAI's Batch API relayed to one instance (resources.ts says which). A submission counts
 * as one request on the caller's user-path rules only and holds no concurrency slot
 * (SEED-SPEC "Limits" 10), after the budget check; listing, reading and cancelling count
 * nothing.
 */
export function registerBatchRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies): void {
  const { catalog } = dependencies;
  app.post('/v1/batches', async (request, reply) => {
    const body = jsonBodyOf(request.body);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw invalidRequest('request body must be a JSON object', { code: 'invalid_body' });
    }
    const { provider, ...rest } = body as Record<string, unknown>;
    if (provider !== undefined && (typeof provider !== 'string' || provider === '')) {
      throw invalidRequest('provider must be the name of a provider instance', { code: 'invalid_body', param: 'provider' });
    }
    const resource = {
      method: 'POST',
      path: 'batches',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rest),
    } as const;
    return relayResource(request, reply, catalog, resource, {
      bodyHint: provider as string | undefined,
      admit: (context) => admitRequest(context, dependencies, {}, { routeRules: false, holdSlot: false }),
    });
  });
  app.get('/v1/batches', (request, reply) => relayResource(request, reply, catalog, { method: 'GET', path: 'batches' }));
  app.get<{ Params: BatchParams }>('/v1/batches/:id', (request, reply) =>
    relayResource(request, reply, catalog, { method: 'GET', path: resourcePath('batches', request.params.id) }),
  );
  app.post<{ Params: BatchParams }>('/v1/batches/:id/cancel', (request, reply) =>
    relayResource(request, reply, catalog, { method: 'POST', path: resourcePath('batches', request.params.id, 'cancel') }),
  );
}
