import { notOwned } from './owned-resources.ts';
import { catalogue, ownedParametersOf, ownedTypes, type CatalogueRoute, type OwnedTypeName } from './openai-resources.ts';
import type { OwnedKind, OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import { mayView, ownedBy, seesAll, type Caller } from '../../ownership/visibility.ts';

/**
 * What a call of a catalogue route (openai-resources.ts) is held to, wherever it comes in: the
 * owned relay on `/v1` (http/routes/owned-relay.ts) and the passthrough `/p/{instance}`
 * (passthrough-ownership.ts) share these steps (ADR 28, ADR 40): the path's owned ids and the
 * body's references are visible to the caller before anything goes upstream, and what a 2xx
 * answer creates is recorded (a child as its parent owner's), what it deletes forgotten.
 */

/** What the checks read of the owner store. */
export type OwnerLookup = Pick<OwnershipStore, 'find' | 'findMany'>;

/** Ids one request body may name at most; past it the request is refused like an unknown id (a bound, not a policy). */
const maximumReferences = 1000;

/** The owner rows of the path's owned ids on a known instance, each visible to the caller; the first is the parent. */
export async function assertPathVisible(
  store: OwnerLookup,
  caller: Caller,
  instance: string,
  path: string,
  params: Readonly<Record<string, string>>,
): Promise<OwnedResource | null> {
  let parent: OwnedResource | null = null;
  for (const [name, type] of ownedParametersOf(path)) {
    const id = params[name] as string;
    const owner = await store.find(type.kind, instance, id);
    if (!mayView(caller, owner)) throw notOwned(type, id, name);
    parent ??= owner;
  }
  return parent;
}

/**
 * Ids a body names must be the caller's to see. A reference is a dotted path (`*` for every item
 * of a list: `messages.*.attachments.*.file_id`) to a string, a list of strings, or `{ "id": ... }`
 * (any other value names nothing: `container: { "type": "auto" }`). Linear in the body; at most
 * `maximumReferences` ids, read from the store in one query per kind.
 */
export async function assertReferencesVisible(
  store: OwnerLookup,
  caller: Caller,
  instance: string,
  references: Readonly<Record<string, OwnedTypeName>>,
  json: Readonly<Record<string, unknown>> | null,
): Promise<void> {
  if (json === null || seesAll(caller)) return;
  const named = new Map<OwnedTypeName, Map<string, string>>();
  let count = 0;
  for (const [field, typeName] of Object.entries(references)) {
    for (const value of valuesAt(json, field.split('.'))) {
      const ids = Array.isArray(value) ? (value as unknown[]) : [isObject(value) ? value['id'] : value];
      for (const id of ids) {
        if (typeof id !== 'string') continue;
        const ofType = named.get(typeName) ?? new Map<string, string>();
        named.set(typeName, ofType);
        if (ofType.has(id)) continue;
        count += 1;
        if (count > maximumReferences) throw notOwned(ownedTypes[typeName], id, field);
        ofType.set(id, field);
      }
    }
  }
  for (const [typeName, ids] of named) {
    const type = ownedTypes[typeName];
    const owners = await store.findMany(type.kind, instance, [...ids.keys()]);
    const visible = new Set(owners.filter((owner) => mayView(caller, owner)).map((owner) => owner.id));
    for (const [id, field] of ids) if (!visible.has(id)) throw notOwned(type, id, field);
  }
}

/** The values at a dotted path of a body (`*` steps into every item of a list); linear in the body's size. */
export function valuesAt(value: unknown, path: readonly string[]): unknown[] {
  if (path.length === 0) return value === undefined ? [] : [value];
  const [step, ...rest] = path;
  if (step === '*') return Array.isArray(value) ? value.flatMap((item: unknown) => valuesAt(item, rest)) : [];
  if (!isObject(value)) return [];
  return valuesAt(value[step as string], rest);
}

/** The owner of what a request created: the owner of the path's parent resource, else the caller. */
export function ownerOf(caller: Caller, parent: OwnedResource | null, kind: OwnedKind, instance: string, id: string): OwnedResource {
  const record = ownedBy(caller, kind, instance, id);
  return parent === null ? record : { ...record, userPath: parent.userPath, keyId: parent.keyId };
}

/** Whether a 2xx answer of this route creates or deletes something the owner store keeps. */
export function observesAnswer(route: CatalogueRoute, json: Readonly<Record<string, unknown>> | null): boolean {
  return (Object.keys(route.records ?? {}).length > 0 && json?.['stream'] !== true) || route.deletes === true;
}

/**
 * After a 2xx answer: each id the route records (read with `fieldOf`, a dotted path of the
 * answer; '' for none) is the owner's, and a deleted resource is forgotten.
 */
export async function recordAnswer(
  store: OwnershipStore,
  call: { caller: Caller; parent: OwnedResource | null; instance: string; route: CatalogueRoute; params: Readonly<Record<string, string>> },
  fieldOf: (path: string) => string,
): Promise<void> {
  const { caller, parent, instance, route, params } = call;
  for (const [field, typeName] of Object.entries(route.records ?? {})) {
    const id = fieldOf(field);
    if (id !== '') await store.record(ownerOf(caller, parent, ownedTypes[typeName].kind, instance, id));
  }
  const last = ownedParametersOf(route.path).at(-1);
  if (route.deletes === true && last !== undefined) await store.delete(last[1].kind, instance, params[last[0]] as string);
}

/** A string at a dotted path of a JSON object (`file.id`), or ''. */
export function fieldAt(answer: unknown, path: string): string {
  let value: unknown = answer;
  for (const key of path.split('.')) value = isObject(value) ? value[key] : undefined;
  return typeof value === 'string' ? value : '';
}

/** A path's segments matched against the catalogue: the route and its parameters, or null. */
export interface CatalogueMatch {
  readonly route: CatalogueRoute;
  readonly params: Record<string, string>;
}

const patterns = catalogue.map((route) => ({ route, segments: route.path.split('/').slice(2) }));

/**
 * The catalogue route of `method` and the (decoded) segments of a path under `/v1`, or null.
 * A `*` segment takes the rest of the path. Where two routes match, the one with a static
 * segment where the other has a parameter wins, as in Fastify (`videos/characters/content` is
 * a character). Constant work per route: linear in the path.
 */
export function matchCatalogue(method: string, segments: readonly string[]): CatalogueMatch | null {
  let best: (CatalogueMatch & { pattern: readonly string[] }) | null = null;
  for (const { route, segments: pattern } of patterns) {
    if (route.method !== method) continue;
    const params = matchSegments(pattern, segments);
    if (params !== null && (best === null || moreStatic(pattern, best.pattern))) best = { route, params, pattern };
  }
  return best === null ? null : { route: best.route, params: best.params };
}

/** Whether `pattern` has a static segment first where `other` has a parameter (or a wildcard). */
function moreStatic(pattern: readonly string[], other: readonly string[]): boolean {
  const rank = (part: string | undefined): number => (part === '*' ? 2 : part?.startsWith(':') === true ? 1 : 0);
  for (const [index, part] of pattern.entries()) {
    const difference = rank(part) - rank(other[index]);
    if (difference !== 0) return difference < 0;
  }
  return false;
}

function matchSegments(pattern: readonly string[], segments: readonly string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (const [index, part] of pattern.entries()) {
    const segment = segments[index];
    if (segment === undefined) return null;
    if (part === '*') {
      params['*'] = segments.slice(index).join('/');
      return params;
    }
    if (part.startsWith(':')) params[part.slice(1)] = segment;
    else if (part !== segment.toLowerCase()) return null;
  }
  return segments.length === pattern.length ? params : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
