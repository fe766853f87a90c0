import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { admitRequest, type AdmissionDependencies } from '../../admission/admit.ts';
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
import {
  assertPathVisible,
  assertReferencesVisible,
  fieldAt,
  observesAnswer,
  recordAnswer,
  valuesAt,
} from '../../gateway/relay/owned-call.ts';
import { jsonObjectOf, listOwned, notOwned } from '../../gateway/relay/owned-resources.ts';
import { assertNativeReferencesVisible } from '../../gateway/responses/native-ownership.ts';
import { chooseResourceInstance, splitQuery, type ResourceRequest } from '../../gateway/relay/resources.ts';
import type { OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import { mayView, ownedBy, ownerKeyIdOf, seesAll, type Caller } from '../../ownership/visibility.ts';
import { settleMessageRuns, settleSource } from '../../gateway/relay/metered-outputs.ts';
import { chargeAnswer, chargeSeen, runStreamObserver, type MeteredAnswer } from '../../gateway/relay/resource-metering.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { Metering } from '../../usage/metering.ts';
import { requestContextOf } from '../request-context.ts';
import { relayCall, relayObservedEvents, type ResourceCall } from './resource-relay.ts';

interface OwnedRelay extends AdmissionDependencies {
  readonly catalog: ModelCatalog;
  readonly ownership: OwnershipStore;
  readonly virtualModels: VirtualModelNames | null;
  readonly metering: Metering;
}

/**
 * Every route of the catalogue (gateway/relay/openai-resources.ts) through one handler: the
 * instance is the `provider` hint, else the one the path's resource was created on, else the
 * default (`resources_default`, else the first OpenAI-type instance). Every owned id in the path
 * (and every id a body field names) must be visible to the caller before anything is sent
 * upstream, else 404 `<resource>_not_found` exactly like an unknown id; what a create answer
 * names is recorded as the caller's (a child of an owned parent: as the parent owner's);
 * top-level listings are served from the owner store (ADR 28, ADR 40). A metered route is
 * admitted first (limits, budgets) and what a model ran behind any route is charged once
 * (resource-metering.ts, ADR 40).
 */
export function registerOwnedResourceRoutes(app: FastifyInstance, relay: OwnedRelay): void {
  for (const route of catalogue) {
    app.route({ method: route.method, url: route.path, handler: (request, reply) => relayOwned(request, reply, route, relay) });
  }
}

async function relayOwned(request: FastifyRequest, reply: FastifyReply, route: CatalogueRoute, relay: OwnedRelay): Promise<unknown> {
  const context = requestContextOf(request, reply);
  const { hint: queryHint, query } = splitQuery(request.url);
  const body = bodyOf(request, route.models ?? []);
  const params = request.params as Record<string, string>;
  const { adapter, parent } = await chooseInstance(relay, context, route, params, body.hint ?? queryHint);
  request.logFields = { provider: adapter.name };
  const call: ResourceCall = { adapter, context, query, parameters: new URLSearchParams(query.slice(1)) };
  await assertReferencesVisible(relay.ownership, context, adapter.name, route.references ?? {}, body.json);
  if (route.responsesState === true && body.json !== null) {
    await assertNativeReferencesVisible({ store: relay.ownership, state: null }, context, adapter.name, body.json);
  }
  for (const model of body.models) assertModelAllowed(relay, context, adapter.name, model);
  if (route.metered !== undefined || route.admits === true) await admitMetered(reply, relay, context.userPath, adapter.name, body.model);
  const meters = route.metered ?? route.charges;
  const streamed = body.json?.['stream'] === true;
  // A run with no owned parent is charged to the caller when this route ran it, else to nobody.
  const caller = { userPath: context.userPath, keyId: ownerKeyIdOf(context.principal) };
  const owner = parent ?? (route.metered === undefined ? null : caller);
  const metered: MeteredAnswer | null =
    meters === undefined ? null : { kind: meters, adapter, context, owner, status: 200, stream: streamed };
  if (route.lists !== undefined && !seesAll(context)) {
    const seen =
      metered === null
        ? {}
        : { seen: (object: Record<string, unknown>, owner: OwnedResource) => chargeSeen(relay, metered, object, owner) };
    return listOwned(relay.ownership, adapter, context, ownedTypes[route.lists], call.parameters, seen);
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
  const settles = route.settles === 'vector_store_search' ? undefined : route.settles;
  const source = settles === undefined ? null : { kind: settles, adapter, context, owner: parent, status: 200, stream: false };
  if (source !== null) await settleSource(relay, source, params, parent);
  const records = Object.entries(route.records ?? {});
  if (streamed && metered?.kind === 'run') {
    const threadOwner = records.some(([, typeName]) => typeName === 'thread') ? ownedBy(context, 'thread', adapter.name, '') : null;
    return relayObservedEvents(request, reply, call, resource, runStreamObserver(relay, metered, threadOwner));
  }
  const settlesMessages = source?.kind === 'run' && params['run_id'] === undefined;
  const observes = observesAnswer(route, body.json) || metered !== null || settlesMessages;
  if (!observes) return relayCall(request, reply, call, resource);
  const owned = { caller: context, parent, instance: adapter.name, route, params };
  return relayCall(request, reply, call, resource, async (answer) => {
    await recordAnswer(relay.ownership, owned, (field) => fieldAt(answer, field));
    if (metered !== null) await chargeAnswer(relay, metered, answer);
    if (settlesMessages) await settleMessageRuns(relay, source, params['thread_id'] as string, answer);
  });
}

/**
 * A metered route counts as one request of the caller, like a batch submission: its user
 * path's rules, the instance's rules and, when the body names a model, that model's rules (a run
 * is model work), with no concurrency slot held (the work runs upstream after the answer); then
 * its budget, refused once spent (the cost is known only when the provider reports it).
 */
async function admitMetered(
  reply: FastifyReply,
  relay: OwnedRelay,
  userPath: string,
  instance: string,
  model: string | undefined,
): Promise<void> {
  const route = model === undefined ? { provider: instance } : { provider: instance, model };
  reply.headers((await admitRequest(userPath, relay, route, { holdSlot: false })).headers);
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

/** Every model the body names (an assistant's, a job's, a realtime session's, a grader's) must pass the key's model allowlist. */
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
  /** The `model` field (JSON or form), when it is a string: its rules admit a metered route. */
  readonly model?: string;
  /** Every model the body names: `model` and the route's `models` paths (ADR 40). */
  readonly models: readonly string[];
  /** The JSON object sent upstream (without `provider`), null for other bodies. */
  readonly json: Record<string, unknown> | null;
  readonly bytes?: string | Buffer;
  readonly contentType?: string;
}

/**
 * The body as the upstream gets it: JSON without `provider`, a form without its `provider` field,
 * other bytes as they came; with the models it names at `model` and at `modelPaths` (a form's
 * field named by a path's first step is read as JSON for the rest: `session.model`).
 */
function bodyOf(request: FastifyRequest, modelPaths: readonly string[]): RelayBody {
  const { body } = request;
  const contentType = request.headers['content-type'];
  if (body === undefined || body === null) return { json: null, models: [] };
  if (Buffer.isBuffer(body)) {
    if (!(contentType ?? '').toLowerCase().startsWith('multipart/form-data')) {
      return { json: null, models: [], bytes: body, contentType: contentType ?? 'application/octet-stream' };
    }
    const form = readForm(body, boundaryOf(contentType));
    const hint = fieldOf(form, 'provider');
    const bytes = hint === undefined ? body : editForm(form, { drop: ['provider'] });
    const model = fieldOf(form, 'model');
    const named = modelPaths.flatMap((path) => {
      const [field, ...rest] = path.split('.');
      const value = fieldOf(form, field as string);
      return value === undefined ? [] : rest.length === 0 ? [value] : valuesAt(jsonObjectOf(value), rest);
    });
    return {
      ...(hint === undefined || hint === '' ? {} : { hint }),
      ...(model === undefined ? {} : { model }),
      models: modelsOf(model, named),
      json: null,
      bytes,
      contentType: contentType as string,
    };
  }
  if (typeof body !== 'object' || Array.isArray(body)) {
    return { json: null, models: [], bytes: JSON.stringify(body), contentType: 'application/json' };
  }
  const { provider, ...rest } = body as Record<string, unknown>;
  if (provider !== undefined && (typeof provider !== 'string' || provider === '')) {
    throw invalidRequest('provider must be the name of a provider instance', { code: 'invalid_body', param: 'provider' });
  }
  return {
    ...(provider === undefined ? {} : { hint: provider }),
    ...(typeof rest['model'] === 'string' ? { model: rest['model'] } : {}),
    models: modelsOf(
      rest['model'],
      modelPaths.flatMap((path) => valuesAt(rest, path.split('.'))),
    ),
    json: rest,
    bytes: JSON.stringify(rest),
    contentType: 'application/json',
  };
}

/** The model names among `model` and the values at the route's model paths (strings only). */
function modelsOf(model: unknown, named: readonly unknown[]): string[] {
  return [model, ...named].filter((value): value is string => typeof value === 'string');
}
