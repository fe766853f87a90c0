import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { admitRequest } from '../../admission/admit.ts';
import { invalidRequest } from '../../errors/gateway-error.ts';
import {
  assertCacheModelAllowed,
  assertGeminiVisible,
  bareId,
  chooseGeminiInstance,
  fileIdsOf,
  gatewayUploadUrl,
  geminiCachedContents,
  geminiFiles,
  geminiUploads,
  meterCachedContent,
  uploadIdOf,
} from '../../gateway/relay/gemini-resources.ts';
import { geminiPaging, listOwned, type OwnedCollection } from '../../gateway/relay/owned-resources.ts';
import { resourcePath, splitQuery, type ResourceRequest } from '../../gateway/relay/resources.ts';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import type { OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import { ownedBy, seesAll } from '../../ownership/visibility.ts';
import { readBody } from '../../providers/upstream-body.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';
import { contentHeadersOf } from './relay-reply.ts';
import { forwardCall, relayCall, type ResourceCall } from './resource-relay.ts';
import { jsonObjectOf } from '../../gateway/relay/owned-resources.ts';

interface NameParams {
  name: string;
}

interface GeminiRoutes {
  readonly dependencies: ChatPipelineDependencies;
  readonly ownership: OwnershipStore;
}

/** The upload protocol's own request headers, forwarded as the client sent them. */
const uploadHeaders = [
  'x-goog-upload-protocol',
  'x-goog-upload-command',
  'x-goog-upload-offset',
  'x-goog-upload-header-content-length',
  'x-goog-upload-header-content-type',
  'x-goog-upload-file-name',
];
/** What the upload protocol answers besides the body. */
const uploadAnswerHeaders = ['x-goog-upload-status', 'x-goog-upload-size-received', 'x-goog-upload-chunk-granularity'];

async function geminiCall(
  request: FastifyRequest,
  reply: FastifyReply,
  routes: GeminiRoutes,
  collection: OwnedCollection,
  id?: string,
): Promise<{ call: ResourceCall; owner: OwnedResource | null }> {
  const context = requestContextOf(request, reply);
  const { hint, query } = splitQuery(request.url);
  const { adapter, owner } = await chooseGeminiInstance(routes.dependencies.catalog, routes.ownership, context, collection, hint, id);
  request.logFields = { provider: adapter.name };
  return { call: { adapter, context, query, parameters: new URLSearchParams(query.slice(1)) }, owner };
}

/**
 * Gemini's Files API and cached contents as `@google/genai` calls them, relayed to a Gemini-type
 * instance (the `provider` query hint, else the instance that recorded the name, else the first
 * one) on its native API, owned per tenant (ADR 41): another tenant's name answers 404 in
 * Google's envelope (`file_not_found`, `cached_content_not_found`) like an unknown one, and a
 * tenant's listings come from the owner store (`files`/`cachedContents`, `nextPageToken`).
 * Uploads are resumable: the start is relayed and its `x-goog-upload-url` pointed at the
 * gateway, which relays each chunk of an upload session the caller started (bounded by
 * BODY_SIZE_LIMIT). A cached content's model passes the allowlist, its files must be the
 * caller's, its create is admitted against limits and budgets and its stored tokens recorded.
 */
export function registerGeminiResourceRoutes(
  app: FastifyInstance,
  dependencies: ChatPipelineDependencies,
  ownership: OwnershipStore,
): void {
  const routes: GeminiRoutes = { dependencies, ownership };
  // The upload protocol's bytes come as they are, whatever their content type (the SDK labels a file chunk JSON).
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post('/upload/v1beta/files', (request, reply) => upload(request, reply, routes));
  });
  for (const collection of [geminiFiles, geminiCachedContents]) {
    const base = `/v1beta/${collection.path}`;
    const paging = geminiPaging(collection.path);
    app.get(base, async (request, reply) => {
      const { call } = await geminiCall(request, reply, routes, collection);
      if (seesAll(call.context)) return relayCall(request, reply, call, { method: 'GET', path: collection.path, surface: 'native' });
      return listOwned(ownership, call.adapter, call.context, collection, call.parameters, { paging });
    });
    const byName = (method: 'GET' | 'PATCH' | 'DELETE') =>
      async function handler(request: FastifyRequest<{ Params: NameParams }>, reply: FastifyReply): Promise<FastifyReply> {
        const name = request.params.name;
        const { call } = await geminiCall(request, reply, routes, collection, name);
        const resource: ResourceRequest = { method, path: resourcePath(collection.path, name), surface: 'native' };
        if (method === 'PATCH')
          Object.assign(resource, {
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(jsonBodyOf(request.body) ?? {}),
          });
        if (method !== 'DELETE') return relayCall(request, reply, call, resource);
        return relayCall(request, reply, call, resource, async () => {
          await ownership.delete(collection.kind, call.adapter.name, name);
        });
      };
    app.get<{ Params: NameParams }>(`${base}/:name`, byName('GET'));
    app.delete<{ Params: NameParams }>(`${base}/:name`, byName('DELETE'));
    if (collection === geminiCachedContents) app.patch<{ Params: NameParams }>(`${base}/:name`, byName('PATCH'));
  }
  app.post('/v1beta/cachedContents', (request, reply) => createCachedContent(request, reply, routes));
}

/** `POST /v1beta/cachedContents`: model allowed, files the caller's, admitted; recorded and its tokens metered. */
async function createCachedContent(request: FastifyRequest, reply: FastifyReply, routes: GeminiRoutes): Promise<FastifyReply> {
  const { dependencies, ownership } = routes;
  const body = jsonBodyOf(request.body);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest('request body must be a JSON object', { code: 'invalid_body' });
  }
  const json = body as Record<string, unknown>;
  const { call } = await geminiCall(request, reply, routes, geminiCachedContents);
  assertCacheModelAllowed(call.context, call.adapter.name, json, dependencies.virtualModels);
  await assertGeminiVisible(dependencies.catalog, ownership, call.context, geminiFiles, fileIdsOf(json), 'fileUri');
  const model = typeof json['model'] === 'string' ? bareId(json['model'], 'models') : undefined;
  const route = { provider: call.adapter.name, ...(model === undefined ? {} : { model }) };
  reply.headers((await admitRequest(call.context.userPath, dependencies, route, { routeRules: false, holdSlot: false })).headers);
  const resource: ResourceRequest = {
    method: 'POST',
    path: 'cachedContents',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(json),
    surface: 'native',
  };
  return relayCall(request, reply, call, resource, async (created) => {
    if (typeof created['name'] !== 'string') return;
    await ownership.record(ownedBy(call.context, 'cached_content', call.adapter.name, bareId(created['name'], 'cachedContents')));
    meterCachedContent(dependencies.metering, call.context, call.adapter.name, created);
  });
}

/**
 * `POST /upload/v1beta/files`: without `upload_id`, the start of a resumable upload (relayed; the
 * session recorded as the caller's; its upload URL pointed at the gateway); with it, a chunk of a
 * session the caller started (the final answer's file recorded as the session owner's).
 */
async function upload(request: FastifyRequest, reply: FastifyReply, routes: GeminiRoutes): Promise<FastifyReply> {
  const uploadId = new URLSearchParams(splitQuery(request.url).query.slice(1)).get('upload_id');
  const headers: Record<string, string> = {};
  for (const name of uploadHeaders) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const contentType = request.headers['content-type'];
  if (typeof contentType === 'string') headers['content-type'] = contentType;
  const body = Buffer.isBuffer(request.body) ? request.body : '';
  if (uploadId === null) {
    const { call } = await geminiCall(request, reply, routes, geminiFiles);
    const response = await forwardCall({ ...call, query: '' }, { method: 'POST', path: 'files', headers, body, surface: 'upload' });
    const upstreamUrl = response.headers['x-goog-upload-url'];
    const id = uploadIdOf(typeof upstreamUrl === 'string' ? upstreamUrl : undefined, call.adapter.name);
    const text = await readBody(response, call.adapter.name, call.context.signal);
    await routes.ownership.record(ownedBy(call.context, 'upload', call.adapter.name, id));
    const url = gatewayUploadUrl(`${request.protocol}://${request.host}`, id);
    return reply.code(response.statusCode).headers(answerHeaders(response.headers)).header('x-goog-upload-url', url).send(text);
  }
  const { call, owner } = await geminiCall(request, reply, routes, geminiUploads, uploadId);
  const path = `files?${new URLSearchParams({ upload_id: uploadId, upload_protocol: 'resumable' }).toString()}`;
  const response = await forwardCall({ ...call, query: '' }, { method: 'POST', path, headers, body, surface: 'upload' });
  const text = await readBody(response, call.adapter.name, call.context.signal);
  const file = jsonObjectOf(text)?.['file'];
  const name = typeof file === 'object' && file !== null ? (file as { name?: unknown }).name : undefined;
  if (typeof name === 'string') {
    const record = ownedBy(call.context, 'file', call.adapter.name, bareId(name, 'files'));
    await routes.ownership.record(owner === null ? record : { ...record, userPath: owner.userPath, keyId: owner.keyId });
  }
  return reply.code(response.statusCode).headers(answerHeaders(response.headers)).send(text);
}

function answerHeaders(headers: Parameters<typeof contentHeadersOf>[0]): Record<string, string | string[] | number> {
  const kept: Record<string, string | string[] | number> = {};
  for (const [name, value] of Object.entries(contentHeadersOf(headers))) if (value !== undefined) kept[name] = value;
  for (const name of uploadAnswerHeaders) {
    const value = headers[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}
