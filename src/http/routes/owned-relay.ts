import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { modelAllowed, type VirtualModelNames } from '../../auth/allowlist.ts';
import { invalidRequest, permissionError } from '../../errors/gateway-error.ts';
import { boundaryOf, editForm, fieldOf, readForm } from '../../gateway/relay/multipart.ts';
import {
  catalogue,
  ownedParametersOf,
  ownedTypes,
  typeHeadersOf,
  type CatalogueRoute,
  type OwnedType,
} from '../../gateway/relay/openai-resources.ts';
import { assertPathVisible, assertReferencesVisible, fieldAt, observesAnswer, recordAnswer } from '../../gateway/relay/owned-call.ts';
import { listOwned, notOwned } from '../../gateway/relay/owned-resources.ts';
import { assertNativeReferencesVisible } from '../../gateway/responses/native-ownership.ts';
import { chooseResourceInstance, splitQuery, type ResourceRequest } from '../../gateway/relay/resources.ts';
import type { OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import { mayView, seesAll, type Caller } from '../../ownership/visibility.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import { requestContextOf } from '../request-context.ts';
import { relayCall, type ResourceCall } from './resource-relay.ts';

interface OwnedRelay {
  readonly catalog: ModelCatalog;
  readonly ownership: OwnershipStore;
  readonly virtualModels: VirtualModelNames | null;
}

/**
 * Every route of the catalogue (gateway/relay/openai-resources.ts) through one handler: the
 * instance is the `provider` hint, else the one the path's resource was created on, else the
 * default (`resources_default`, else the first OpenAI-type instance). Every owned id in the path
 * (and every id a body field names) must be visible to the caller before anything is sent
 * upstream, else 404 `<resource>_not_found` exactly like an unknown id; what a create answer
 * names is recorded as the caller's (a child of an owned parent: as the parent owner's);
 * top-level listings are served from the owner store (ADR 28, ADR 40).
 */
export function registerOwnedResourceRoutes(app: FastifyInstance, relay: OwnedRelay): void {
  for (const route of catalogue) {
    app.route({ method: route.method, url: route.path, handler: (request, reply) => relayOwned(request, reply, route, relay) });
  }
}

async function relayOwned(request: FastifyRequest, reply: FastifyReply, route: CatalogueRoute, relay: OwnedRelay): Promise<unknown> {
  const context = requestContextOf(request, reply);
  const { hint: queryHint, query } = splitQuery(request.url);
  const body = bodyOf(request);
  const params = request.params as Record<string, string>;
  const { adapter, parent } = await chooseInstance(relay, context, route, params, body.hint ?? queryHint);
  request.logFields = { provider: adapter.name };
  const call: ResourceCall = { adapter, context, query, parameters: new URLSearchParams(query.slice(1)) };
  await assertReferencesVisible(relay.ownership, context, adapter.name, route.references ?? {}, body.json);
  if (route.responsesState === true && body.json !== null) {
    await assertNativeReferencesVisible({ store: relay.ownership, state: null }, context, adapter.name, body.json);
  }
  assertModelAllowed(relay, context, adapter.name, body.model);
  if (route.lists !== undefined && !seesAll(context)) {
    return listOwned(relay.ownership, adapter, context, ownedTypes[route.lists], call.parameters);
  }
  const beta = request.headers['openai-beta'];
  const headers: Record<string, string> = { ...typeHeadersOf(route.path) };
  if (typeof beta === 'string') headers['openai-beta'] = beta;
  if (body.contentType !== undefined) headers['content-type'] = body.contentType;
  const resource: ResourceRequest = {
    method: route.method,
    path: upstreamPath(route.path, params),
    headers,
    ...(body.bytes === undefined ? {} : { body: body.bytes }),
  };
  if (!observesAnswer(route, body.json)) return relayCall(request, reply, call, resource);
  const owned = { caller: context, parent, instance: adapter.name, route, params };
  return relayCall(request, reply, call, resource, (answer) => recordAnswer(relay.ownership, owned, (field) => fieldAt(answer, field)));
}

/**
 * The instance and the owner row of the path's first owned id. Without a hint, an id is looked
 * up on every instance; one nobody recorded is visible to those who see everything only.
 */
async function chooseInstance(
  relay: OwnedRelay,
  caller: Caller,
  route: CatalogueRoute,
  params: Record<string, string>,
  hint: string | undefined,
): Promise<{ adapter: ProviderAdapter; parent: OwnedResource | null }> {
  if (hint !== undefined) {
    const adapter = chooseResourceInstance(relay.catalog, hint);
    return { adapter, parent: await assertPathVisible(relay.ownership, caller, adapter.name, route.path, params) };
  }
  let adapter: ProviderAdapter | undefined;
  let parent: OwnedResource | null = null;
  for (const [name, type] of ownedParametersOf(route.path)) {
    const id = params[name] as string;
    if (adapter !== undefined) {
      parent ??= await assertPathVisible(relay.ownership, caller, adapter.name, `/v1/:${name}`, { [name]: id });
      continue;
    }
    const owner = await findAnywhere(relay, type, id);
    if (!mayView(caller, owner)) throw notOwned(type, id, name);
    adapter = owner === null ? chooseResourceInstance(relay.catalog, undefined) : relay.catalog.instances.get(owner.instance)?.adapter;
    if (adapter === undefined) throw notOwned(type, id, name);
    parent = owner;
  }
  return { adapter: adapter ?? chooseResourceInstance(relay.catalog, undefined), parent };
}

async function findAnywhere(relay: OwnedRelay, type: OwnedType, id: string): Promise<OwnedResource | null> {
  for (const instance of relay.catalog.instances.keys()) {
    const owner = await relay.ownership.find(type.kind, instance, id);
    if (owner !== null) return owner;
  }
  return null;
}

/** A `model` the body names (an assistant's, a fine-tuning job's, a video's) must pass the key's model allowlist. */
function assertModelAllowed(relay: OwnedRelay, caller: Caller, instance: string, model: string | undefined): void {
  const allowed = caller.principal.allowedModels;
  if (model === undefined || allowed === undefined || allowed === null) return;
  if (modelAllowed(allowed, { instance, model }, relay.virtualModels)) return;
  throw permissionError(`this credential may not use model ${instance}/${model.slice(0, 256)}`, {
    code: 'model_not_allowed',
    param: 'model',
  });
}

/** The upstream path: the route's without `/v1/`, each parameter one encoded segment (`.` and `..` refused). */
function upstreamPath(pattern: string, params: Record<string, string>): string {
  return pattern
    .slice('/v1/'.length)
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':') && segment !== '*') return segment;
      const value = params[segment.replace(/^:/, '')] ?? '';
      if (value === '.' || value === '..') throw invalidRequest(`"${value}" is not a valid id`, { code: 'invalid_path' });
      return encodeURIComponent(value);
    })
    .join('/');
}

interface RelayBody {
  readonly hint?: string;
  /** The `model` field (JSON or form), when it is a string. */
  readonly model?: string;
  /** The JSON object sent upstream (without `provider`), null for other bodies. */
  readonly json: Record<string, unknown> | null;
  readonly bytes?: string | Buffer;
  readonly contentType?: string;
}

/** The body as the upstream gets it: JSON without `provider`, a form without its `provider` field, other bytes as they came. */
function bodyOf(request: FastifyRequest): RelayBody {
  const { body } = request;
  const contentType = request.headers['content-type'];
  if (body === undefined || body === null) return { json: null };
  if (Buffer.isBuffer(body)) {
    if (!(contentType ?? '').toLowerCase().startsWith('multipart/form-data')) {
      return { json: null, bytes: body, contentType: contentType ?? 'application/octet-stream' };
    }
    const form = readForm(body, boundaryOf(contentType));
    const hint = fieldOf(form, 'provider');
    const bytes = hint === undefined ? body : editForm(form, { drop: ['provider'] });
    const model = fieldOf(form, 'model');
    return {
      ...(hint === undefined || hint === '' ? {} : { hint }),
      ...(model === undefined ? {} : { model }),
      json: null,
      bytes,
      contentType: contentType as string,
    };
  }
  if (typeof body !== 'object' || Array.isArray(body)) return { json: null, bytes: JSON.stringify(body), contentType: 'application/json' };
  const { provider, ...rest } = body as Record<string, unknown>;
  if (provider !== undefined && (typeof provider !== 'string' || provider === '')) {
    throw invalidRequest('provider must be the name of a provider instance', { code: 'invalid_body', param: 'provider' });
  }
  return {
    ...(provider === undefined ? {} : { hint: provider }),
    ...(typeof rest['model'] === 'string' ? { model: rest['model'] } : {}),
    json: rest,
    bytes: JSON.stringify(rest),
    contentType: 'application/json',
  };
}
