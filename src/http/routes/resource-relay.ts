import type { FastifyReply, FastifyRequest } from 'fastify';
import { forwardResource, chooseResourceInstance, splitQuery, type ResourceRequest } from '../../gateway/relay/resources.ts';
import { jsonObjectOf } from '../../gateway/relay/owned-resources.ts';
import type { RequestContext } from '../../gateway/request-context.ts';
import type { ProviderAdapter } from '../../providers/provider.ts';
import { readBody } from '../../providers/upstream-body.ts';
import type { SseEvent } from '../../streaming/sse-parser.ts';
import type { ModelCatalog } from '../../routing/model-catalog.ts';
import { clientClosedRequest, type ClientAbort } from '../client-abort.ts';
import { requestContextOf } from '../request-context.ts';
import { contentHeadersOf, relayToClient } from './relay-reply.ts';

/** One files or batches request: its instance, its context and its query without the hint. */
export interface ResourceCall {
  readonly adapter: ProviderAdapter;
  readonly context: RequestContext & { readonly abort: ClientAbort };
  /** `?...` or empty. */
  readonly query: string;
  readonly parameters: URLSearchParams;
}

/**
 * The instance chosen by the body's `provider` field, else the query's, else the default; the
 * query string is kept without the hint.
 */
export function resourceCall(request: FastifyRequest, reply: FastifyReply, catalog: ModelCatalog, bodyHint?: string): ResourceCall {
  const context = requestContextOf(request, reply);
  const { hint, query } = splitQuery(request.url);
  const adapter = chooseResourceInstance(catalog, bodyHint === '' ? undefined : (bodyHint ?? hint));
  request.logFields = { provider: adapter.name };
  return { adapter, context, query, parameters: new URLSearchParams(query.slice(1)) };
}

/** Sends the request upstream; a client that left turns a failure into 499. */
export async function forwardCall(call: ResourceCall, resource: ResourceRequest): Promise<Awaited<ReturnType<typeof forwardResource>>> {
  return forwardResource(call.adapter, { ...resource, path: `${resource.path}${call.query}` }, call.context).catch((error: unknown) => {
    throw call.context.signal.aborted ? clientClosedRequest() : error;
  });
}

/**
 * Relays the request and streams the answer back with its status and content headers. With
 * `observe`, the (bounded) JSON answer is read first and handed to it before it is sent:
 * what the gateway records of a created or read object. An object it returns is sent instead
 * (an Anthropic batch's `results_url` pointed back at the gateway).
 */
export async function relayCall(
  request: FastifyRequest,
  reply: FastifyReply,
  call: ResourceCall,
  resource: ResourceRequest,
  observe?: (answer: Record<string, unknown>) => Promise<Record<string, unknown> | void>,
): Promise<FastifyReply> {
  const response = await forwardCall(call, resource);
  // A compressed answer (the gateway asks for none) is relayed as is: nothing of it is recorded.
  const encoding = String(response.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (observe === undefined || encoding !== 'identity') {
    await relayToClient(request, reply, response, contentHeadersOf(response.headers), call.context.abort);
    return reply;
  }
  const text = await readBody(response, call.adapter.name, call.context.signal);
  const answer = jsonObjectOf(text);
  // Only a successful answer names what was created, read or deleted (an error keeps every record as it was).
  const replaced = answer !== null && response.statusCode >= 200 && response.statusCode < 300 ? await observe(answer) : undefined;
  return reply
    .code(response.statusCode)
    .headers(contentHeadersOf(response.headers))
    .send(replaced === undefined ? text : JSON.stringify(replaced));
}

/**
 * Relays an answer as it arrives (an event stream) while `onEvent` observes each event; the
 * work it starts (recording, charging) is done before the stream's end reaches the client, and
 * awaited even when the stream broke off. A failure of that work is logged: the relay goes on.
 */
export async function relayObservedEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  call: ResourceCall,
  resource: ResourceRequest,
  onEvent: (event: SseEvent) => Promise<void> | null,
): Promise<FastifyReply> {
  const response = await forwardCall(call, resource);
  const pending: Promise<void>[] = [];
  const observe = (event: SseEvent): void => {
    const work = onEvent(event);
    if (work !== null) pending.push(work.catch((error: unknown) => request.log.warn({ err: error }, 'observing a relayed stream failed')));
  };
  const settled = async (): Promise<void> => void (await Promise.all(pending));
  const headers = contentHeadersOf(response.headers);
  await relayToClient(request, reply, response, headers, call.context.abort, false, settled, observe);
  await settled();
  return reply;
}
