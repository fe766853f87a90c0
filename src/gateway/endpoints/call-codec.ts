import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import type { ChatPipelineDependencies } from '../pipeline-dependencies.ts';
import type { RequestContext } from '../request-context.ts';
import {
  runModelRequest,
  type Answer,
  type EndpointCodec,
  type ModelOutcome,
  type ModelRequest,
  type StreamOutcome,
} from '../run-model-request.ts';

/**
 * A request of an endpoint whose call is shaped per request (a form to edit, a body without a
 * model, a session's query): the request carries its call. These endpoints are not cached and
 * not guarded (their bodies are not chat's).
 */
export interface CallRequest<R> extends ModelRequest {
  /** What the budget estimate reads; null for calls that bill nothing (token counting). */
  readonly body: Readonly<Record<string, unknown>> | null;
  call(target: ResolvedTarget): Promise<R>;
}

/** An outcome of an endpoint that caches nothing: executed, never a cache hit. */
export type ExecutedOutcome<R> = Exclude<ModelOutcome<R>, { kind: 'cached' }>;

/** The codec of such an endpoint: `answerOf` tells a finished JSON answer from one the HTTP layer relays. */
export function callCodec<R>(
  endpoint: string,
  answerOf: (result: R) => Answer | null,
  serves?: (target: ResolvedTarget) => boolean,
): EndpointCodec<CallRequest<R>, R> {
  const codec: EndpointCodec<CallRequest<R>, R> = {
    endpoint,
    guarded: false,
    estimateBody: (request) => request.body,
    call: (target, request) => request.call(target),
    answerOf,
  };
  return serves === undefined ? codec : { ...codec, serves };
}

/** Runs a request of an endpoint that caches nothing through the one pipeline (run-model-request.ts). */
export function runCall<Q extends ModelRequest, R>(
  codec: EndpointCodec<Q, R>,
  request: Q,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ExecutedOutcome<R>> {
  // Without `cache` on the codec, runModelRequest never answers from the cache.
  return runModelRequest(codec, request, context, dependencies) as Promise<ExecutedOutcome<R>>;
}

/** The answer of a call whose result is a checked JSON answer. */
export const jsonAnswer = <R extends Answer>(result: R): Answer => result;

/** The answer of a call that reports no usage (token counting): its body. */
export const bodyOnly = (body: string): Answer => ({ body, usage: null });

/** The answer of a call whose result is always relayed (bytes, sessions). */
export const relayed = (): null => null;

/** Runs a call whose codec relays every result (`relayed`): the outcome is always a stream outcome, finished by the HTTP layer. */
export function runRelayedCall<R>(
  codec: EndpointCodec<CallRequest<R>, R>,
  request: CallRequest<R>,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<StreamOutcome<R>> {
  // `answerOf` gives null for every result and nothing is cached: only a stream outcome comes back.
  return runModelRequest(codec, request, context, dependencies) as Promise<StreamOutcome<R>>;
}
