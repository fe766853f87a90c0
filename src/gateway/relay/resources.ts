import { invalidRequest } from '../../errors/gateway-error.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import { filesAndBatchesTypes } from '../../providers/provider-types.ts';
import { upstreamErrorOf } from '../../providers/upstream-body.ts';
import type { UpstreamResponse } from '../../providers/upstream-client.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import type { RequestContext } from '../request-context.ts';

/**
 * Files and batches name no model, so no route plan chooses their instance. The rule: the
 * `provider` hint (the query parameter, or the form or JSON body field) names it; otherwise
 * the instance with `resources_default: true`, else the first configured instance (configuration order) of a type that serves OpenAI's Files
 * and Batch APIs. Ids are the upstream's, so a file uploaded to one instance is used by
 * batches on that same instance.
 */
export function chooseResourceInstance(catalog: ModelCatalog, hint: string | undefined): ProviderAdapter {
  if (hint !== undefined) {
    const listing = catalog.instances.get(hint);
    if (listing === undefined) {
      throw invalidRequest(`unknown provider "${hint}": no configured instance has that name`, {
        code: 'unknown_provider',
        param: 'provider',
      });
    }
    return listing.adapter;
  }
  const instances = [...catalog.instances.values()].map((listing) => listing.adapter);
  const chosen =
    instances.find((adapter) => adapter.resourcesDefault === true) ?? instances.find((adapter) => filesAndBatchesTypes.has(adapter.type));
  if (chosen !== undefined) return chosen;
  throw invalidRequest(
    `no configured provider instance serves files and batches: configure one of type ${[...filesAndBatchesTypes].join(', ')}, or name one with "provider"`,
    { code: 'unsupported_endpoint', param: 'provider' },
  );
}

/** The `provider` hint of a query string; the hint is the gateway's and never sent upstream. */
export function splitQuery(url: string): { hint: string | undefined; query: string } {
  const start = url.indexOf('?');
  if (start === -1) return { hint: undefined, query: '' };
  const parameters = new URLSearchParams(url.slice(start + 1));
  const hint = parameters.get('provider') ?? undefined;
  parameters.delete('provider');
  const query = parameters.toString();
  return { hint: hint === '' ? undefined : hint, query: query === '' ? '' : `?${query}` };
}

/**
 * `files/{id}` (and a sub-resource) with the id as one encoded segment. An id of `.` or `..`
 * is refused: URL resolution would turn `files/..` into the base URL itself.
 */
export function resourcePath(collection: string, id: string, ...rest: string[]): string {
  if (id === '.' || id === '..') {
    throw invalidRequest(`"${id}" is not a valid id`, { code: 'invalid_path' });
  }
  return [collection, encodeURIComponent(id), ...rest].join('/');
}

export interface ResourceRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Relative to the instance's base URL, query included (`files?purpose=batch`). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Gemini's native or upload surface (ForwardRequest.surface). */
  surface?: 'native' | 'upload';
}

/** Sends a files or batches request to the instance; a non-2xx answer becomes the envelope error. */
export async function forwardResource(
  adapter: ProviderAdapter,
  request: ResourceRequest,
  context: RequestContext,
): Promise<UpstreamResponse> {
  const response = await adapter.forward(
    {
      method: request.method,
      path: request.path,
      headers: request.headers ?? {},
      body: request.body ?? null,
      ...(request.surface === undefined ? {} : { surface: request.surface }),
    },
    { signal: context.signal, requestId: context.requestId },
  );
  if (response.statusCode < 200 || response.statusCode > 299) throw await upstreamErrorOf(response, adapter.name);
  return response;
}
