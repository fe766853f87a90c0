import { permissionError } from '../errors/gateway-error.ts';
import type { Principal } from './principal.ts';
import { accountEndpointOf } from './passthrough-paths.ts';

/** What a request asked for: a virtual model by name, or a concrete model on an instance. */
export type AskedModel = { readonly virtual: string } | { readonly instance: string; readonly model: string };

/** The virtual models as they stand now (src/routing/virtual-models.ts): only whether a name is one. */
export interface VirtualModelNames {
  get(name: string): unknown;
}

/**
 * Whether an allowlist names what the caller asked for (README "Allowlists"). Entries are
 * virtual model names, concrete selectors `<instance>/<model>`, bare model ids (any instance)
 * and `<instance>/*`. The allowlist is about what the caller may ASK for: a virtual model that
 * is allowed may route to any of its targets, and a direct request's failover fallbacks follow.
 * An entry that names a virtual model allows that virtual model only: never a concrete model
 * of the same name (`oai/smart`, or `smart` with a `provider` hint) (ADR 0031).
 */
export function modelAllowed(allowed: readonly string[], asked: AskedModel, virtualModels: VirtualModelNames | null): boolean {
  if ('virtual' in asked) return allowed.includes(asked.virtual);
  const concrete = `${asked.instance}/${asked.model}`;
  const wildcard = `${asked.instance}/*`;
  return allowed.some(
    (entry) => (entry === concrete || entry === asked.model || entry === wildcard) && virtualModels?.get(entry) === undefined,
  );
}

/** The planned request's model against the caller's allowlist: 403 `model_not_allowed` before anything counts it. */
export function assertModelAllowed(
  principal: Principal,
  plan: { readonly virtualModel: string | null; readonly cacheTarget: string },
  virtualModels: VirtualModelNames | null,
): void {
  const allowed = principal.allowedModels;
  if (allowed === undefined || allowed === null) return;
  const asked = askedOf(plan);
  if (modelAllowed(allowed, asked, virtualModels)) return;
  const name = 'virtual' in asked ? asked.virtual : `${asked.instance}/${asked.model}`;
  throw permissionError(`this credential may not use model ${name}`, { code: 'model_not_allowed', param: 'model' });
}

function askedOf(plan: { readonly virtualModel: string | null; readonly cacheTarget: string }): AskedModel {
  if (plan.virtualModel !== null) return { virtual: plan.virtualModel };
  // A direct request's cache target is the target it asked for, `<instance>/<model>` (instance names have no `/`).
  const slash = plan.cacheTarget.indexOf('/');
  return { instance: plan.cacheTarget.slice(0, slash), model: plan.cacheTarget.slice(slash + 1) };
}

/** A `/v1/models` entry: `owned_by` is the instance, or `virtual` for a virtual model. */
export function listedModelAllowed(
  principal: Principal,
  entry: { readonly id: string; readonly owned_by: string },
  virtualModels: VirtualModelNames | null,
): boolean {
  const allowed = principal.allowedModels;
  if (allowed === undefined || allowed === null) return true;
  if (entry.owned_by === 'virtual') return modelAllowed(allowed, { virtual: entry.id }, virtualModels);
  // `GET /v1/models/{id}` may name a model bare (`mock-model`) rather than `<instance>/<model>`.
  const prefix = `${entry.owned_by}/`;
  const model = entry.id.startsWith(prefix) ? entry.id.slice(prefix.length) : entry.id;
  return modelAllowed(allowed, { instance: entry.owned_by, model }, virtualModels);
}

const listingPaths = ['/v1/models', '/v1beta/models'];

/**
 * The request's path against the caller's endpoint allowlist: an entry is a path that covers
 * itself and what lies under it (`/v1/files` covers `/v1/files/abc`); `/mcp` covers `/mcp` and
 * every `/mcp/{name}`; a bare name (or `/mcp/{name}`) covers that MCP server only. Listing the
 * models (GET) is always allowed: the list is filtered by the model allowlist.
 */
export function assertEndpointAllowed(principal: Principal, method: string, url: string): void {
  const allowed = principal.allowedEndpoints;
  if (allowed === undefined || allowed === null) return;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (endpointAllowed(allowed, method, path)) return;
  throw permissionError(`this credential may not call ${path}`, { code: 'endpoint_not_allowed' });
}

export function endpointAllowed(allowed: readonly string[], method: string, path: string): boolean {
  if (method === 'GET' && listingPaths.some((listing) => covers(listing, path))) return true;
  const server = path.startsWith('/mcp/') ? safeDecode(path.slice('/mcp/'.length).split('/')[0] ?? '') : null;
  const covering = allowed.filter((entry) => covers(entry, path) || (server !== null && entry === server));
  return covering.length > 0 && (!path.startsWith('/p/') || passthroughResourceAllowed(allowed, covering, path));
}

/**
 * `/p/{instance}/...` to an account-wide resource (files, batches, uploads, fine-tuning, stored
 * responses...: passthrough-paths.ts) needs more than `/p` or `/p/{instance}`: the gateway
 * endpoint it stands for (`/v1/files`, `/v1/batches`, ...) or an entry that names the resource
 * under the instance itself (`/p/openai/v1/files`).
 */
function passthroughResourceAllowed(allowed: readonly string[], covering: readonly string[], path: string): boolean {
  const endpoint = accountEndpointOf(passthroughRestOf(path));
  if (endpoint === null) return true;
  return covering.some((entry) => accountEndpointOf(passthroughRestOf(entry)) !== null) || allowed.some((entry) => covers(entry, endpoint));
}

function passthroughRestOf(path: string): string {
  return /^\/p\/[^/]*\/?(.*)$/s.exec(path)?.[1] ?? '';
}

function covers(entry: string, path: string): boolean {
  const base = entry.length > 1 && entry.endsWith('/') ? entry.slice(0, -1) : entry;
  return path === base || (path.startsWith(base) && path.charCodeAt(base.length) === 47);
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * `/p/{instance}/...` under a model allowlist: `<instance>/*` opens every path; otherwise each
 * model the request names where it decides what runs (src/gateway/relay/passthrough-models.ts:
 * the path's and the body's) must be allowed, and a request whose model cannot be read, or
 * that names none, needs the wildcard.
 */
export function assertPassthroughAllowed(
  principal: Principal,
  instance: string,
  models: readonly string[] | null,
  virtualModels: VirtualModelNames | null,
): void {
  const allowed = principal.allowedModels;
  if (allowed === undefined || allowed === null) return;
  const wildcard = `${instance}/*`;
  if (allowed.includes(wildcard) && virtualModels?.get(wildcard) === undefined) return;
  if (models === null || models.length === 0) {
    throw permissionError(`this credential may not use this passthrough path of ${instance} (it needs ${wildcard})`, {
      code: 'model_not_allowed',
    });
  }
  const refused = models.find((model) => !modelAllowed(allowed, { instance, model }, virtualModels));
  if (refused === undefined) return;
  throw permissionError(`this credential may not use model ${instance}/${refused}`, { code: 'model_not_allowed', param: 'model' });
}
