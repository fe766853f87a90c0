import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../../errors/gateway-error.ts';
import { boundaryOf, editForm, fieldOf, readForm } from '../../gateway/relay/multipart.ts';
import { assertVisible, listOwned, ownedFiles } from '../../gateway/relay/owned-resources.ts';
import { resourcePath } from '../../gateway/relay/resources.ts';
import type { OwnershipStore } from '../../ownership/ownership-store.ts';
import { ownedBy, seesAll } from '../../ownership/visibility.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import { anthropicFiles, isAnthropicFilesRequest } from './anthropic-resources.ts';
import { relayCall, resourceCall } from './resource-relay.ts';

interface FileParams {
  id: string;
}

/**
 * OpenAI's Files API relayed to one instance (resources.ts says which). Uploads and reads
 * are not model calls: they are authenticated but count against no rate limit or budget,
 * and record no usage. Every file uploaded is recorded with its owner: a read, download or
 * delete of an id the caller may not see answers 404 `file_not_found` like an unknown id,
 * and a tenant's listing is served from the owner store (src/ownership/, ADR 28). A request
 * with `anthropic-version` (the Anthropic SDK's `beta.files`) is Anthropic's Files API instead
 * (anthropic-resources.ts, ADR 41).
 */
export function registerFileRoutes(app: FastifyInstance, catalog: ModelCatalog, ownership: OwnershipStore): void {
  const anthropicRead = anthropicFiles.byId('GET', [], catalog, ownership);
  const anthropicDelete = anthropicFiles.byId('DELETE', [], catalog, ownership);
  const anthropicContent = anthropicFiles.byId('GET', ['content'], catalog, ownership);
  app.post('/v1/files', async (request, reply) => {
    if (isAnthropicFilesRequest(request)) return anthropicFiles.upload(request, reply, catalog, ownership);
    if (!Buffer.isBuffer(request.body)) throw invalidRequest('expected a multipart/form-data body with a file', { code: 'invalid_body' });
    const contentType = request.headers['content-type'];
    const form = readForm(request.body, boundaryOf(contentType));
    const call = resourceCall(request, reply, catalog, fieldOf(form, 'provider'));
    const body = editForm(form, { drop: ['provider'] });
    const resource = { method: 'POST', path: 'files', headers: { 'content-type': contentType as string }, body } as const;
    return relayCall(request, reply, call, resource, async (answer) => {
      if (typeof answer['id'] === 'string') await ownership.record(ownedBy(call.context, 'file', call.adapter.name, answer['id']));
    });
  });
  app.get('/v1/files', async (request, reply) => {
    if (isAnthropicFilesRequest(request)) return anthropicFiles.list(request, reply, catalog, ownership);
    const call = resourceCall(request, reply, catalog);
    if (seesAll(call.context)) return relayCall(request, reply, call, { method: 'GET', path: 'files' });
    const purpose = call.parameters.get('purpose');
    return listOwned(ownership, call.adapter, call.context, ownedFiles, call.parameters, {
      keep: (file) => purpose === null || file['purpose'] === purpose,
    });
  });
  app.get<{ Params: FileParams }>('/v1/files/:id', async (request, reply) => {
    if (isAnthropicFilesRequest(request)) return anthropicRead(request, reply);
    const call = resourceCall(request, reply, catalog);
    await assertVisible(ownership, call.context, ownedFiles, call.adapter.name, request.params.id);
    return relayCall(request, reply, call, { method: 'GET', path: resourcePath('files', request.params.id) });
  });
  app.delete<{ Params: FileParams }>('/v1/files/:id', async (request, reply) => {
    if (isAnthropicFilesRequest(request)) return anthropicDelete(request, reply);
    const call = resourceCall(request, reply, catalog);
    const { id } = request.params;
    await assertVisible(ownership, call.context, ownedFiles, call.adapter.name, id);
    return relayCall(request, reply, call, { method: 'DELETE', path: resourcePath('files', id) }, async () => {
      await ownership.delete('file', call.adapter.name, id);
    });
  });
  app.get<{ Params: FileParams }>('/v1/files/:id/content', async (request, reply) => {
    if (isAnthropicFilesRequest(request)) return anthropicContent(request, reply);
    const call = resourceCall(request, reply, catalog);
    await assertVisible(ownership, call.context, ownedFiles, call.adapter.name, request.params.id);
    return relayCall(request, reply, call, { method: 'GET', path: resourcePath('files', request.params.id, 'content') });
  });
}
