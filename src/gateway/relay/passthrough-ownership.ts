import { invalidRequest, notFound, permissionError } from '../../errors/gateway-error.ts';
import { accountEndpointOf, routeSegments } from '../../auth/passthrough-paths.ts';
import { mayView, seesAll, type Caller } from '../../ownership/visibility.ts';
import { assertNativeReferencesVisible, type NativeOwnership } from '../responses/native-ownership.ts';
import { assertVisible, jsonObjectOf, ownedBatches, ownedFiles, ownedUploads, type OwnedCollection } from './owned-resources.ts';

const collections: ReadonlyMap<string, OwnedCollection> = new Map([
  ['files', ownedFiles],
  ['batches', ownedBatches],
  ['uploads', ownedUploads],
]);
const stateful = new Set(['files', 'batches', 'uploads', 'responses', 'conversations']);
/** How deep the collection may sit in the path (`v1/files`, `openai/files` on Azure). */
const maximumPrefix = 2;

/**
 * `/p/{instance}/...` reaches the same account as `/v1`: what tenants own there is held to the
 * same rule (ADR 28). An id under files, batches, uploads or responses must be visible to the
 * caller (else the same 404 as an unknown id); a request naming Responses state must name
 * visible state; listing or creating files, batches and uploads, and anything under
 * conversations, is for those who see everything (403 `endpoint_not_allowed`: the passthrough
 * records no owner, so a tenant uses `/v1`), and so is every other account-wide collection
 * (`accountEndpointOf`).
 */
export async function assertPassthroughOwned(
  owners: NativeOwnership,
  caller: Caller,
  instance: string,
  path: string,
  method: string,
  body: Buffer | undefined,
): Promise<void> {
  if (seesAll(caller)) return;
  // Split after decoding too: `files%2F{id}` is `files/{id}` to an upstream that decodes it.
  const segments = (path.split('?', 1)[0] ?? '')
    .split('/')
    .flatMap((segment) => decoded(segment).split(/[\\/]/))
    .filter((segment) => segment !== '');
  const at = segments.findIndex((segment, index) => index <= maximumPrefix && stateful.has(segment.toLowerCase()));
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
  // `responses/input_tokens` counts a Responses request: its body is checked, it names no id.
  const id = name === 'responses' && segments.length === at + 2 && segments[at + 1] === 'input_tokens' ? undefined : segments[at + 1];
  const collection = collections.get(name);
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

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
