import { notFound } from '../../errors/gateway-error.ts';
import type { OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import { mayView, ownedBy, seesAll, type Caller } from '../../ownership/visibility.ts';
import type { ResponseState } from '../../responses/response-state.ts';
import { ownedTypes, responsesReferences } from '../relay/openai-resources.ts';
import { assertReferencesVisible } from '../relay/owned-call.ts';
import { notOwned } from '../relay/owned-resources.ts';

/** Output items recorded per response at most (a bound, not a policy). */
const maximumItemsRecorded = 1000;
/** `item_reference` items checked per request at most; past it the request is refused. */
const maximumReferences = 1000;

/** What the native Responses path needs to keep responses to their owners. */
export interface NativeOwnership {
  readonly store: OwnershipStore;
  /** The gateway's own stored responses (chat translation), which a request may also name. */
  readonly state: ResponseState | null;
}

/**
 * Before a request goes to a native Responses instance: every piece of upstream state it names
 * (`previous_response_id`, `conversation`, `item_reference` input items, and the vector stores,
 * containers, files and skills of its tools and input parts: `responsesReferences`) must be
 * visible to the caller (ADR 28, ADR 40), else the same 404 as for an unknown id, without
 * contacting the upstream. Visible: recorded as created by the caller's path or a descendant on
 * that instance, or held by the gateway itself under such a path; the master key and
 * admin-role keys see all. Used by `/v1/responses` and the passthrough's `responses` alike.
 */
export async function assertNativeReferencesVisible(
  ownership: NativeOwnership,
  caller: Caller,
  instance: string,
  body: Record<string, unknown>,
): Promise<void> {
  if (seesAll(caller)) return;
  const previous = body['previous_response_id'];
  if (typeof previous === 'string' && previous !== '') {
    const owner = await ownership.store.find('response', instance, previous);
    const held = owner === null && ownership.state !== null && (await ownership.state.holdsVisible(previous, caller.userPath));
    if (!held && (owner === null || !mayView(caller, owner))) {
      throw notFound(`Previous response with id '${previous}' not found.`, { code: 'response_not_found', param: 'previous_response_id' });
    }
  } else if (previous !== undefined && previous !== null) {
    throw notFound(`Previous response with id '${String(previous)}' not found.`, {
      code: 'response_not_found',
      param: 'previous_response_id',
    });
  }
  const conversation = conversationIdOf(body['conversation']);
  if (conversation !== null && !mayView(caller, await ownership.store.find('conversation', instance, conversation))) {
    throw notOwned(ownedTypes.conversation, conversation, 'conversation');
  }
  await assertItemsVisible(ownership, caller, instance, referencedItemIds(body['input']));
  await assertReferencesVisible(ownership.store, caller, instance, responsesReferences, body);
}

async function assertItemsVisible(ownership: NativeOwnership, caller: Caller, instance: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  if (ids.length > maximumReferences) {
    throw notFound(`Item with id '${ids[maximumReferences] ?? ''}' not found.`, { code: 'item_not_found', param: 'input' });
  }
  const owned = await ownership.store.findMany('response_item', instance, ids);
  const visible = new Set(owned.filter((owner) => mayView(caller, owner)).map((owner) => owner.id));
  const rest = ids.filter((id) => !visible.has(id));
  const held =
    rest.length === 0 || ownership.state === null ? new Set<string>() : await ownership.state.visibleItemIds(rest, caller.userPath);
  const missing = rest.find((id) => !held.has(id));
  if (missing !== undefined) throw notFound(`Item with id '${missing}' not found.`, { code: 'item_not_found', param: 'input' });
}

/**
 * Records a native response and its output items as the caller's, and the containers its code
 * interpreter calls ran in (a `container: { "type": "auto" }` tool makes the upstream create
 * one; the first owner recorded keeps an id, so a container the caller named changes nothing).
 * Failures are the caller's to log.
 */
export async function recordNativeResponse(
  store: OwnershipStore,
  caller: Caller,
  instance: string,
  response: Record<string, unknown>,
): Promise<void> {
  const id = response['id'];
  if (typeof id !== 'string' || id === '') return;
  const now = Date.now();
  const output = Array.isArray(response['output']) ? (response['output'] as unknown[]) : [];
  const items: OwnedResource[] = [];
  for (const item of output.slice(0, maximumItemsRecorded)) {
    const itemId = (item as { id?: unknown } | null)?.id;
    if (typeof itemId === 'string' && itemId !== '') items.push(ownedBy(caller, 'response_item', instance, itemId, now));
    const container = (item as { type?: unknown; container_id?: unknown } | null)?.container_id;
    if ((item as { type?: unknown } | null)?.type === 'code_interpreter_call' && typeof container === 'string' && container !== '') {
      items.push(ownedBy(caller, 'container', instance, container, now));
    }
  }
  await store.recordMany([ownedBy(caller, 'response', instance, id, now), ...items]);
}

/** `conversation` is an id or `{ id }`. Anything else present is refused as an unknown id (fail closed). */
function conversationIdOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' ? id : JSON.stringify(value).slice(0, 128);
}

function referencedItemIds(input: unknown): string[] {
  if (!Array.isArray(input)) return [];
  const ids = new Set<string>();
  for (const item of input) {
    if (typeof item !== 'object' || item === null) continue;
    const { type, id } = item as { type?: unknown; id?: unknown };
    if (type === 'item_reference') ids.add(typeof id === 'string' ? id : String(id));
  }
  return [...ids];
}
