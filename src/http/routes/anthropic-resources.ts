import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { admitRequest } from '../../admission/admit.ts';
import { invalidRequest } from '../../errors/gateway-error.ts';
import {
  anthropicFilesBeta,
  assertMessageBatchModelsAllowed,
  chooseAnthropicInstance,
  observeMessageBatch,
  ownedAnthropicFiles,
  ownedMessageBatches,
  withGatewayResultsUrl,
} from '../../gateway/relay/anthropic-resources.ts';
import { boundaryOf, editForm, fieldOf, readForm } from '../../gateway/relay/multipart.ts';
import type { BatchChargeDependencies } from '../../gateway/relay/batch-charge.ts';
import { anthropicPaging, listOwned, type OwnedCollection, type Paging } from '../../gateway/relay/owned-resources.ts';
import { resourcePath, splitQuery, type ResourceRequest } from '../../gateway/relay/resources.ts';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import type { OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import { ownedBy, seesAll } from '../../ownership/visibility.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';
import { relayCall, type ResourceCall } from './resource-relay.ts';

interface IdParams {
  id: string;
}

/** The headers of Anthropic's API a client chooses (its version and betas); the key is always the instance's. */
function anthropicHeaders(request: FastifyRequest, defaults: Record<string, string> = {}): Record<string, string> {
  const headers: Record<string, string> = { ...defaults };
  for (const name of ['anthropic-version', 'anthropic-beta']) {
    const value = request.headers[name];
    if (typeof value === 'string' && value !== '') headers[name] = value;
  }
  return headers;
}

/** The call on the Anthropic instance chosen for the collection (and the path's id, when there is one). */
async function anthropicCall(
  request: FastifyRequest,
  reply: FastifyReply,
  catalog: ModelCatalog,
  ownership: OwnershipStore,
  collection: OwnedCollection,
  options: { hint?: string | undefined; id?: string } = {},
): Promise<{ call: ResourceCall; owner: OwnedResource | null }> {
  const context = requestContextOf(request, reply);
  const { hint, query } = splitQuery(request.url);
  const chosen = options.hint ?? hint;
  const { adapter, owner } = await chooseAnthropicInstance(catalog, ownership, context, collection, chosen, options.id);
  request.logFields = { provider: adapter.name };
  return { call: { adapter, context, query, parameters: new URLSearchParams(query.slice(1)) }, owner };
}

/** The gateway's own origin as the client reached it (where a batch's results are read). */
function originOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/**
 * Anthropic's Message Batches as the `@anthropic-ai/sdk` calls them (`client.messages.batches`),
 * relayed to an Anthropic-type instance (the `provider` hint, else the instance the batch was
 * recorded on, else the first one). Owned like OpenAI's batches (ADR 28, ADR 41): a batch of
 * another tenant answers 404 `message_batch_not_found` like an unknown id, a tenant's listing
 * comes from the owner store in Anthropic's paging shape, every request's model passes the
 * key's allowlist, a create counts against limits and budgets at admission, and an `ended`
 * batch is charged once to its owner from its results. Errors are Anthropic's envelope (hooks.ts).
 */
export function registerMessageBatchRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies, ownership: OwnershipStore): void {
  const batchRoutes: BatchRoutes = {
    dependencies,
    ownership,
    charging: { ownership, metering: dependencies.metering, logger: app.log },
  };
  app.post('/v1/messages/batches', (request, reply) => createMessageBatch(request, reply, batchRoutes));
  app.get('/v1/messages/batches', (request, reply) => listMessageBatches(request, reply, batchRoutes));
  const byId = (method: 'GET' | 'POST' | 'DELETE', rest: string[], observe: 'batch' | 'deleted' | 'none') =>
    async function handler(request: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply): Promise<FastifyReply> {
      const { id } = request.params;
      const { call, owner } = await anthropicCall(request, reply, dependencies.catalog, ownership, ownedMessageBatches, { id });
      const resource: ResourceRequest = { method, path: resourcePath('messages/batches', id, ...rest), headers: anthropicHeaders(request) };
      if (observe === 'none') return relayCall(request, reply, call, resource);
      if (observe === 'deleted') {
        return relayCall(request, reply, call, resource, async () => {
          await ownership.delete('message_batch', call.adapter.name, id);
        });
      }
      return relayCall(request, reply, call, resource, async (batch) => {
        await observeMessageBatch(batchRoutes.charging, call.adapter, call.context, batch, owner);
        return withGatewayResultsUrl(batch, originOf(request));
      });
    };
  app.get<{ Params: IdParams }>('/v1/messages/batches/:id', byId('GET', [], 'batch'));
  app.post<{ Params: IdParams }>('/v1/messages/batches/:id/cancel', byId('POST', ['cancel'], 'batch'));
  app.delete<{ Params: IdParams }>('/v1/messages/batches/:id', byId('DELETE', [], 'deleted'));
  // JSONL, streamed as it comes (never buffered).
  app.get<{ Params: IdParams }>('/v1/messages/batches/:id/results', byId('GET', ['results'], 'none'));
}

interface BatchRoutes {
  readonly dependencies: ChatPipelineDependencies;
  readonly ownership: OwnershipStore;
  readonly charging: BatchChargeDependencies;
}

/** `POST /v1/messages/batches`: models allowed, admitted (limits, budgets), then recorded as the caller's. */
async function createMessageBatch(request: FastifyRequest, reply: FastifyReply, routes: BatchRoutes): Promise<FastifyReply> {
  const { dependencies, ownership } = routes;
  const body = jsonBodyOf(request.body);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest('request body must be a JSON object', { code: 'invalid_body' });
  }
  const { provider, ...rest } = body as Record<string, unknown>;
  if (provider !== undefined && (typeof provider !== 'string' || provider === '')) {
    throw invalidRequest('provider must be the name of a provider instance', { code: 'invalid_body', param: 'provider' });
  }
  const hint = provider as string | undefined;
  const { call } = await anthropicCall(request, reply, dependencies.catalog, ownership, ownedMessageBatches, { hint });
  assertMessageBatchModelsAllowed(call.context, call.adapter.name, rest, dependencies.virtualModels);
  reply.headers((await admitRequest(call.context.userPath, dependencies, {}, { routeRules: false, holdSlot: false })).headers);
  const headers = anthropicHeaders(request, { 'content-type': 'application/json' });
  const resource: ResourceRequest = { method: 'POST', path: 'messages/batches', headers, body: JSON.stringify(rest) };
  return relayCall(request, reply, call, resource, async (batch) => {
    if (typeof batch['id'] === 'string') await ownership.record(ownedBy(call.context, 'message_batch', call.adapter.name, batch['id']));
    return withGatewayResultsUrl(batch, originOf(request));
  });
}

/** `GET /v1/messages/batches`: the caller's from the owner store (everyone's for admins); each batch seen ended is charged. */
async function listMessageBatches(request: FastifyRequest, reply: FastifyReply, routes: BatchRoutes): Promise<unknown> {
  const { dependencies, ownership, charging } = routes;
  const { call } = await anthropicCall(request, reply, dependencies.catalog, ownership, ownedMessageBatches);
  const origin = originOf(request);
  if (!seesAll(call.context)) {
    assertForwardPaging(call.parameters);
    return listOwned(ownership, call.adapter, call.context, ownedMessageBatches, call.parameters, {
      paging: anthropicPaging,
      seen: async (batch, owner) => {
        await observeMessageBatch(charging, call.adapter, call.context, batch, owner);
        if (typeof batch['results_url'] === 'string') Object.assign(batch, withGatewayResultsUrl(batch, origin));
      },
    });
  }
  const resource: ResourceRequest = { method: 'GET', path: 'messages/batches', headers: anthropicHeaders(request) };
  return relayCall(request, reply, call, resource, async (page) => {
    const data = Array.isArray(page['data']) ? (page['data'] as unknown[]) : [];
    const shown: unknown[] = [];
    for (const item of data) {
      const batch = typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : null;
      if (batch === null || typeof batch['id'] !== 'string') {
        shown.push(item);
        continue;
      }
      await observeMessageBatch(
        charging,
        call.adapter,
        call.context,
        batch,
        await ownership.find('message_batch', call.adapter.name, batch['id']),
      );
      shown.push(withGatewayResultsUrl(batch, origin));
    }
    return { ...page, data: shown };
  });
}

/** The owner store pages forward only: `before_id` is refused rather than answered wrongly. */
function assertForwardPaging(parameters: URLSearchParams): void {
  if (parameters.get('before_id') === null) return;
  throw invalidRequest('before_id is not supported on the gateway: page forward with after_id', {
    code: 'invalid_parameter',
    param: 'before_id',
  });
}

/**
 * Anthropic's Files page as SDKs read it: `data`, `has_more`, `first_id`, `last_id` (the
 * Messages-era cursor, `after_id`) and `next_page` (the cursor the SDK's `PageCursor` sends
 * back as `page`).
 */
const anthropicFilesPaging: Paging = {
  limitParameter: 'limit',
  afterParameter: 'page',
  page: (data, hasMore, cursor) => ({
    ...anthropicPaging.page(data, hasMore, cursor),
    next_page: hasMore ? cursor : null,
  }),
};

/** Whether a `/v1/files` request is Anthropic's (its SDK always sends `anthropic-version`; OpenAI's never does). */
export function isAnthropicFilesRequest(request: FastifyRequest): boolean {
  return typeof request.headers['anthropic-version'] === 'string';
}

/**
 * Anthropic's Files API (beta `files-api-2025-04-14`) on the `/v1/files` routes, chosen by the
 * `anthropic-version` header (files.ts dispatches): upload, list (owned, Anthropic's paging),
 * metadata, delete and download, relayed to an Anthropic-type instance; files are owned as
 * kind `file` on that instance. Not metered (no model runs).
 */
export const anthropicFiles = {
  async upload(request: FastifyRequest, reply: FastifyReply, catalog: ModelCatalog, ownership: OwnershipStore): Promise<FastifyReply> {
    if (!Buffer.isBuffer(request.body)) throw invalidRequest('expected a multipart/form-data body with a file', { code: 'invalid_body' });
    const contentType = request.headers['content-type'];
    const form = readForm(request.body, boundaryOf(contentType));
    const hint = fieldOf(form, 'provider');
    const { call } = await anthropicCall(request, reply, catalog, ownership, ownedAnthropicFiles, { hint: hint === '' ? undefined : hint });
    const headers = anthropicHeaders(request, { 'anthropic-beta': anthropicFilesBeta, 'content-type': contentType as string });
    const resource: ResourceRequest = { method: 'POST', path: 'files', headers, body: editForm(form, { drop: ['provider'] }) };
    return relayCall(request, reply, call, resource, async (answer) => {
      if (typeof answer['id'] === 'string') await ownership.record(ownedBy(call.context, 'file', call.adapter.name, answer['id']));
    });
  },
  async list(request: FastifyRequest, reply: FastifyReply, catalog: ModelCatalog, ownership: OwnershipStore): Promise<unknown> {
    const { call } = await anthropicCall(request, reply, catalog, ownership, ownedAnthropicFiles);
    const headers = anthropicHeaders(request, { 'anthropic-beta': anthropicFilesBeta });
    if (seesAll(call.context)) return relayCall(request, reply, call, { method: 'GET', path: 'files', headers });
    assertForwardPaging(call.parameters);
    const afterId = call.parameters.get('after_id');
    if (afterId !== null && call.parameters.get('page') === null) call.parameters.set('page', afterId);
    return listOwned(ownership, call.adapter, call.context, ownedAnthropicFiles, call.parameters, { paging: anthropicFilesPaging });
  },
  byId(method: 'GET' | 'DELETE', rest: string[], catalog: ModelCatalog, ownership: OwnershipStore) {
    return async (request: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply): Promise<FastifyReply> => {
      const { id } = request.params;
      const { call } = await anthropicCall(request, reply, catalog, ownership, ownedAnthropicFiles, { id });
      const headers = anthropicHeaders(request, { 'anthropic-beta': anthropicFilesBeta });
      const resource: ResourceRequest = { method, path: resourcePath('files', id, ...rest), headers };
      if (method !== 'DELETE') return relayCall(request, reply, call, resource);
      return relayCall(request, reply, call, resource, async () => {
        await ownership.delete('file', call.adapter.name, id);
      });
    };
  },
};
