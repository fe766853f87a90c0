import { invalidRequest, notFound, permissionError } from '../../errors/gateway-error.ts';
import { accountEndpointOf, routeSegments } from '../../auth/passthrough-paths.ts';
import { mayView, ownedBy, seesAll, type Caller } from '../../ownership/visibility.ts';
import { assertNativeReferencesVisible, type NativeOwnership } from '../responses/native-ownership.ts';
import type { OwnedResource } from '../../ownership/ownership-store.ts';
import {
  assertPathVisible,
  assertReferencesVisible,
  matchCatalogue,
  observesAnswer,
  recordAnswer,
  type CatalogueMatch,
} from './owned-call.ts';
import { assertVisible, jsonObjectOf, ownedBatches, ownedFiles, ownedUploads, type OwnedCollection } from './owned-resources.ts';
import type { UsageTap } from './usage-tap.ts';
import { ownedMessageBatches } from './anthropic-resources.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import { storedCompletionRecorder } from '../stored-chat-completion.ts';

const collections: ReadonlyMap<string, OwnedCollection> = new Map([
  ['files', ownedFiles],
  ['batches', ownedBatches],
  ['uploads', ownedUploads],
]);
const stateful = new Set(['files', 'batches', 'uploads', 'responses', 'conversations']);
/** Collections with rules of their own here; the rest of the catalogue is matched route by route. */
const ownRules = new Set(['files', 'batches', 'responses']);
/** What may precede a catalogue path: the API version (`v1/`), Azure's `openai/` (and `openai/v1/`). */
const apiPrefixes = new Set(['v1', 'openai']);
const bodyOnly = new Set(['input_tokens', 'compact']);
/** How deep the collection may sit in the path (`v1/files`, `openai/files` on Azure). */
const maximumPrefix = 2;

/** A passthrough call of a catalogue route: its route, parameters and the owner row of its path's first owned id. */
export interface PassthroughOwnedCall extends CatalogueMatch {
  readonly parent: OwnedResource | null;
}

/**
 * `/p/{instance}/...` reaches the same account as `/v1`: what tenants own there is held to the
 * same rule (ADR 28, ADR 40). A path that is a route of the catalogue (openai-resources.ts,
 * after `v1/` or Azure's `openai/`) gets the owned relay's treatment (owned-call.ts): its owned
 * ids and its body's references must be visible to the caller (else the same 404 as an unknown
 * id), and what it creates is recorded (`ownedCallRecorder`); a top-level listing stays for
 * those who see everything (403 `endpoint_not_allowed`: a tenant lists through `/v1`, from the
 * owner store). An id under files, batches or responses must be visible to the caller; a
 * request naming Responses state must name visible state; listing or creating files and
 * batches, anything else under uploads or conversations, and every other account-wide
 * collection (`accountEndpointOf`) is for those who see everything.
 */
export async function assertPassthroughOwned(
  owners: NativeOwnership,
  caller: Caller,
  instance: string,
  path: string,
  method: string,
  body: Buffer | undefined,
): Promise<PassthroughOwnedCall | null> {
  const segments = segmentsOf(path);
  const rest = withoutApiPrefix(segments);
  // `vector_stores/{id}/files/{file_id}` is the vector store's route, not a file's.
  const match = ownRules.has(rest[0]?.toLowerCase() ?? '') ? null : matchCatalogue(method, rest);
  if (match !== null) return checkedCatalogueCall(owners, caller, instance, match, body);
  await assertOwnRules(owners, caller, instance, segments, method, body);
  return null;
}

async function assertOwnRules(
  owners: NativeOwnership,
  caller: Caller,
  instance: string,
  segments: string[],
  method: string,
  body: Buffer | undefined,
): Promise<void> {
  if (seesAll(caller)) return;
  const at = collectionAt(segments);
  if (at === -1) {
    // Any other account-wide collection (fine-tuning jobs, vector stores, assistants, stored chat
    // completions, Gemini cached contents, Vertex and Bedrock batch jobs): nothing records who
    // created what there, so a tenant would reach every tenant's.
    // `GET chat/completions` lists the stored completions of the account.
    const split = segments.map(encodeURIComponent).join('/');
    const listsStored = method !== 'POST' && routeSegments(split)?.join('/').toLowerCase() === 'chat/completions';
    const endpoint = listsStored ? '/v1/chat/completions' : accountEndpointOf(split);
    if (endpoint === null) return;
    throw permissionError(
      `${endpoint} resources of the provider account are not owned per tenant: the passthrough serves them to admins only`,
      {
        code: 'endpoint_not_allowed',
      },
    );
  }
  const name = (segments[at] as string).toLowerCase();
  // `responses/input_tokens` and `responses/compact` take a Responses request: its body is checked, they name no id.
  const id = name === 'responses' && segments.length === at + 2 && bodyOnly.has(segments[at + 1] as string) ? undefined : segments[at + 1];
  // Anthropic's `messages/batches/{id}` are message batches, owned as `/v1/messages/batches` records them (ADR 41).
  const collection = name === 'batches' && segments[at - 1]?.toLowerCase() === 'messages' ? ownedMessageBatches : collections.get(name);
  if (collection !== undefined && id !== undefined) {
    await assertVisible(owners.store, caller, collection, instance, id);
    return;
  }
  if (name === 'responses' && id !== undefined) {
    if (!mayView(caller, await owners.store.find('response', instance, id)))
      throw notFound(`Response with id '${id}' not found.`, { code: 'response_not_found' });
    return;
  }
  if (name === 'responses') {
    if (method !== 'POST' || body === undefined) return;
    // A body the gateway cannot read (compressed, not a JSON object) could name any state: refused.
    const parsed = jsonObjectOf(body.toString('utf8'));
    if (parsed === null) {
      throw invalidRequest('a Responses request through the passthrough must be an uncompressed JSON object', {
        code: 'invalid_body',
      });
    }
    await assertNativeReferencesVisible(owners, caller, instance, parsed);
    return;
  }
  throw permissionError(`/${name} is reached through /v1/${name} (owned per tenant), not through the passthrough`, {
    code: 'endpoint_not_allowed',
  });
}

/** A passthrough path's segments after its API prefix (`v1/`, `openai/`, `openai/v1/`). */
function withoutApiPrefix(segments: readonly string[]): readonly string[] {
  let rest = segments;
  for (let skipped = 0; skipped < maximumPrefix && apiPrefixes.has(rest[0]?.toLowerCase() ?? ''); skipped += 1) rest = rest.slice(1);
  return rest;
}

/** The owned relay's checks for a catalogue route reached through the passthrough (fail closed on a body it cannot read). */
async function checkedCatalogueCall(
  owners: NativeOwnership,
  caller: Caller,
  instance: string,
  match: CatalogueMatch,
  body: Buffer | undefined,
): Promise<PassthroughOwnedCall> {
  const { route } = match;
  if (route.lists !== undefined && !seesAll(caller)) {
    throw permissionError(`a listing of ${route.path} through the passthrough is for admins only: a tenant lists through ${route.path}`, {
      code: 'endpoint_not_allowed',
    });
  }
  const parent = await assertPathVisible(owners.store, caller, instance, route.path, match.params);
  // Where a model runs (a run, an eval run, a job, a video, a search, a client secret) it is
  // admitted, checked against the allowlist and charged on `/v1` only (ADR 40).
  const shown = route.path.replace(/:(\w+)/g, '{$1}');
  const runsModel = (route.metered ?? route.charges ?? route.settles) !== undefined || route.admits === true || route.models !== undefined;
  if (runsModel && !seesAll(caller)) {
    throw permissionError(`${shown} runs a model: a tenant reaches it through ${shown}, where it is admitted and charged`, {
      code: 'endpoint_not_allowed',
    });
  }
  if (route.references !== undefined && body !== undefined && !seesAll(caller)) {
    const json = jsonObjectOf(body.toString('utf8'));
    if (json === null) {
      throw invalidRequest(`a ${route.path} request through the passthrough must be an uncompressed JSON object`, { code: 'invalid_body' });
    }
    await assertReferencesVisible(owners.store, caller, instance, route.references, json);
  }
  return { ...match, parent };
}

/**
 * What a catalogue call through the passthrough created (a 2xx JSON answer, read by the tap) is
 * recorded as the owned relay records it, and what it deleted forgotten, before the answer's
 * end reaches the client. Null when there is nothing to record. A failed record is logged.
 */
export function ownedCallRecorder(
  owners: NativeOwnership,
  caller: Caller,
  instance: string,
  owned: PassthroughOwnedCall | null,
  answer: { status: number; json: Readonly<Record<string, unknown>> | undefined },
  log: { warn(fields: Record<string, unknown>, message: string): void },
): ((tap: UsageTap) => Promise<void>) | null {
  if (owned === null || answer.status < 200 || answer.status > 299 || !observesAnswer(owned.route, answer.json ?? null)) return null;
  const call = { caller, parent: owned.parent, instance, route: owned.route, params: owned.params };
  return async (tap) => {
    try {
      await recordAnswer(owners.store, call, (field) => tap.answerField(field));
    } catch (error) {
      log.warn({ err: error, route: owned.route.path }, 'recording the owner of a passthrough resource failed');
    }
  };
}

/**
 * A chat completion sent through the passthrough with `store: true` (`POST .../chat/completions`,
 * a 2xx answer) is recorded as the caller's by the rule of `/v1/chat/completions`
 * (stored-chat-completion.ts): its JSON `id` or its chunks' `id`, before the answer's end
 * reaches the client. Null for any other request.
 */
export function storedChatRecorder(
  owners: NativeOwnership,
  caller: Caller,
  adapter: Pick<ProviderAdapter, 'name' | 'type'>,
  call: { path: string; method: string; status: number; json: Readonly<Record<string, unknown>> | undefined },
  log: { warn(fields: Record<string, unknown>, message: string): void },
): ((tap: UsageTap) => Promise<void>) | null {
  if (call.method !== 'POST' || call.status < 200 || call.status > 299) return null;
  if (withoutApiPrefix(segmentsOf(call.path)).join('/').toLowerCase() !== 'chat/completions') return null;
  const record = storedCompletionRecorder(owners.store, caller, call.json ?? null, adapter, log);
  if (record === null) return null;
  return async (tap) => {
    const id = tap.responseId();
    if (id !== null) await record(id);
  };
}

/** The path's segments, split after decoding too: `files%2F{id}` is `files/{id}` to an upstream that decodes it. */
function segmentsOf(path: string): string[] {
  return (path.split('?', 1)[0] ?? '')
    .split('/')
    .flatMap((segment) => decoded(segment).split(/[\\/]/))
    .filter((segment) => segment !== '');
}

/** Where the owned collection sits in the path; -1 when it names none. */
const collectionAt = (segments: readonly string[]): number =>
  segments.findIndex((segment, index) => index <= maximumPrefix && stateful.has(segment.toLowerCase()));

/**
 * A response created through the passthrough (`POST .../responses`, a 2xx answer) is the
 * caller's, as on `/v1` (ADR 28): once its answer is read (the id of the JSON answer or of the
 * stream's `response.created`) and before its end reaches the client, it is recorded, and
 * pointed to so that `/v1/responses/{id}` serves it to its owner unless the request said
 * `store: false`. Null for any other request. A failed record is logged: the response stays
 * its owner's to read through the passthrough no more than an unrecorded one.
 */
export function createdResponseRecorder(
  owners: NativeOwnership,
  caller: Caller,
  created: { instance: string; path: string; method: string; status: number; store: boolean },
  log: { warn(fields: Record<string, unknown>, message: string): void },
): ((tap: UsageTap) => Promise<void>) | null {
  if (created.method !== 'POST' || created.status < 200 || created.status > 299) return null;
  const segments = segmentsOf(created.path);
  const at = collectionAt(segments);
  if (at === -1 || at !== segments.length - 1 || segments[at]?.toLowerCase() !== 'responses') return null;
  return async (tap) => {
    const id = tap.responseId();
    if (id === null) return;
    try {
      await owners.store.record(ownedBy(caller, 'response', created.instance, id));
      if (created.store) await owners.state?.point(id, created.instance, caller.userPath);
    } catch (error) {
      log.warn({ err: error, response_id: id }, 'recording the owner of a passthrough response failed');
    }
  };
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
