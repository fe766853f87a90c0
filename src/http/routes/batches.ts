import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidRequest } from '../../errors/gateway-error.ts';
import { admitRequest } from '../../admission/admit.ts';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { observeBatch } from '../../gateway/relay/batch-charge.ts';
import { assertBatchModelsAllowed } from '../../gateway/relay/batch-files.ts';
import { assertVisible, listOwned, ownedBatches, ownedFiles } from '../../gateway/relay/owned-resources.ts';
import { resourcePath } from '../../gateway/relay/resources.ts';
import type { OwnershipStore } from '../../ownership/ownership-store.ts';
import { ownedBy, seesAll } from '../../ownership/visibility.ts';
import { jsonBodyOf } from '../json-body.ts';
import { relayCall, resourceCall } from './resource-relay.ts';

interface BatchParams {
  id: string;
}

/**
 * OpenAI's Batch API relayed to one instance (resources.ts says which). A submission counts
 * as one request on the caller's user-path rules only and holds no concurrency slot
 * (SEED-SPEC "Limits" 10), after the budget check; listing, reading and cancelling count
 * nothing. Batches are owned like files (ADR 28): the input file must be the caller's, its
 * models must pass the key's allowlist, and a completed batch is charged to its owner once.
 */
export function registerBatchRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies, ownership: OwnershipStore): void {
  const { catalog } = dependencies;
  const charging = { ownership, metering: dependencies.metering, logger: app.log };
  app.post('/v1/batches', (request, reply) => createBatch(request, reply, dependencies, ownership));
  app.get('/v1/batches', async (request, reply) => {
    const call = resourceCall(request, reply, catalog);
    if (seesAll(call.context)) {
      return relayCall(request, reply, call, { method: 'GET', path: 'batches' }, async (page) => {
        const batches = Array.isArray(page['data']) ? (page['data'] as unknown[]) : [];
        for (const batch of batches) {
          if (typeof batch !== 'object' || batch === null || typeof (batch as { id?: unknown }).id !== 'string') continue;
          const owner = await ownership.find('batch', call.adapter.name, (batch as { id: string }).id);
          await observeBatch(charging, call.adapter, call.context, batch as Record<string, unknown>, owner);
        }
      });
    }
    return listOwned(ownership, call.adapter, call.context, ownedBatches, call.parameters, {
      seen: (batch, owner) => observeBatch(charging, call.adapter, call.context, batch, owner),
    });
  });
  const byId =
    (method: 'GET' | 'POST', rest: string[]) => async (request: { params: BatchParams }, call: ReturnType<typeof resourceCall>) => {
      const owner = await assertVisible(ownership, call.context, ownedBatches, call.adapter.name, request.params.id);
      return { method, path: resourcePath('batches', request.params.id, ...rest), owner } as const;
    };
  app.get<{ Params: BatchParams }>('/v1/batches/:id', async (request, reply) => {
    const call = resourceCall(request, reply, catalog);
    const { owner, ...resource } = await byId('GET', [])(request, call);
    return relayCall(request, reply, call, resource, (batch) => observeBatch(charging, call.adapter, call.context, batch, owner));
  });
  app.post<{ Params: BatchParams }>('/v1/batches/:id/cancel', async (request, reply) => {
    const call = resourceCall(request, reply, catalog);
    const { owner, ...resource } = await byId('POST', ['cancel'])(request, call);
    return relayCall(request, reply, call, resource, (batch) => observeBatch(charging, call.adapter, call.context, batch, owner));
  });
}

/** `POST /v1/batches`: the input file must be the caller's and its models allowed; the batch is recorded as the caller's. */
async function createBatch(
  request: FastifyRequest,
  reply: FastifyReply,
  dependencies: ChatPipelineDependencies,
  ownership: OwnershipStore,
): Promise<FastifyReply> {
  const body = jsonBodyOf(request.body);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest('request body must be a JSON object', { code: 'invalid_body' });
  }
  const { provider, ...rest } = body as Record<string, unknown>;
  if (provider !== undefined && (typeof provider !== 'string' || provider === '')) {
    throw invalidRequest('provider must be the name of a provider instance', { code: 'invalid_body', param: 'provider' });
  }
  const inputFileId = rest['input_file_id'];
  if (typeof inputFileId !== 'string' || inputFileId === '') {
    throw invalidRequest('input_file_id must be the id of an uploaded file', { code: 'invalid_body', param: 'input_file_id' });
  }
  const call = resourceCall(request, reply, dependencies.catalog, provider as string | undefined);
  await assertVisible(ownership, call.context, ownedFiles, call.adapter.name, inputFileId, 'input_file_id');
  await assertBatchModelsAllowed(call.adapter, call.context, inputFileId, dependencies.virtualModels);
  reply.headers((await admitRequest(call.context.userPath, dependencies, {}, { routeRules: false, holdSlot: false })).headers);
  const resource = {
    method: 'POST',
    path: 'batches',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rest),
  } as const;
  return relayCall(request, reply, call, resource, async (answer) => {
    if (typeof answer['id'] === 'string') await ownership.record(ownedBy(call.context, 'batch', call.adapter.name, answer['id']));
  });
}
