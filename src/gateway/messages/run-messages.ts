import type { Readable } from 'node:stream';
import { assertModelAllowed } from '../../auth/allowlist.ts';
import type { CachedResponse } from '../../cache/response-cache.ts';
import { attemptStatus } from '../../errors/envelope.ts';
import { providerError } from '../../errors/gateway-error.ts';
import { messagesApiFor } from '../../providers/provider.ts';
import { callTarget } from '../chat-completions.ts';
import type { CacheMode, ChatPipelineDependencies } from '../pipeline-dependencies.ts';
import { readChatRequest } from '../chat-request.ts';
import { executePlan, type Executed } from '../execute-plan.ts';
import { readModelFields, upstreamBodyOf } from '../model-fields.ts';
import type { RequestContext } from '../request-context.ts';
import type { ActiveGuardrails } from '../../guardrails/pipeline.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import { planRoute } from '../../routing/route-planner.ts';
import type { ChunkOptions, UsageObject } from '../../streaming/chat-chunk.ts';
import type { RelayResult } from '../../streaming/relay.ts';
import { checkMessagesRequest, toChatRequest, type TranslatedRequest } from '../../dialects/anthropic-messages/convert-request.ts';
import { toMessagesResponse } from '../../dialects/anthropic-messages/convert-response.ts';
import { usageOfMessage } from '../../dialects/anthropic-messages/usage.ts';
import { isObject, type JsonObject } from '../../dialects/anthropic-messages/wire.ts';

const endpoint = '/v1/messages';

export interface MessagesRequest {
  /** The Messages body as the client sent it. */
  body: JsonObject;
  selector: string;
  hint: string | undefined;
  stream: boolean;
  /** The API headers the client sent (`anthropic-version`, `anthropic-beta`), for native targets. */
  headers: Record<string, string>;
  /** The chat translation for targets that do not speak Messages (made once, on first use; throws a 400). */
  translate(): TranslatedRequest;
}

/** A stream to relay: native Messages events as they are, or chat chunks to translate. */
export type MessagesStream = { native: true; upstream: Readable } | { native: false; upstream: Readable; chunkOptions: ChunkOptions };

type CallResult = { kind: 'json'; body: string; usage: UsageObject | null } | { kind: 'stream'; stream: MessagesStream };

type Execution = Omit<Executed<CallResult>, 'result'>;

export type MessagesOutcome =
  | { kind: 'cached'; cached: CachedResponse }
  | (Execution & { kind: 'json'; body: string })
  | (Execution & {
      kind: 'stream';
      stream: MessagesStream;
      /** Capture the relayed stream up to this many characters (response cache). */
      captureLimit?: number;
      /** Called by the HTTP layer once the relay has ended. */
      finish: (result: RelayResult) => void;
    });

/** Reads a Messages request; the chat translation is made only when a target needs it. */
export function readMessagesRequest(input: unknown, headers: Record<string, string>): MessagesRequest {
  const { body, stream } = checkMessagesRequest(input);
  const { selector, hint } = readModelFields(body);
  let translated: TranslatedRequest | null = null;
  const translate = (): TranslatedRequest => (translated ??= toChatRequest(body));
  return { body, selector, hint, stream, headers, translate };
}

/**
 * The `/v1/messages` pipeline: the chat pipeline's plan, cache, admission, budgets, retries,
 * failover and metering (execute-plan.ts), with one difference per target: an adapter with
 * the `messagesApi` capability gets the Messages request natively (every field and beta
 * header kept) and its answer is relayed as is; any other gets the chat translation. Cache
 * entries hold what the client received (Messages JSON or events), whichever way it was made.
 */
export async function runMessages(
  request: MessagesRequest,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
  cacheMode: CacheMode,
): Promise<MessagesOutcome> {
  const plan = await planRoute(request.selector, request.hint, dependencies);
  assertModelAllowed(context.principal, plan, dependencies.virtualModels);
  // Guarded requests go through the chat translation, the one shape guardrails read; and skip the cache.
  const guard = dependencies.guardrails?.select(context.userPath, request.selector, endpoint, context) ?? null;
  // A request no candidate can take natively fails on its translation before anything counts it.
  if (guard !== null || plan.candidates.every((target) => messagesApiFor(target.adapter, target.model) === undefined)) request.translate();
  const cache = guard === null ? dependencies.cache : null;
  const cacheKey = cache === null ? null : cache.keyFor(endpoint, plan.cacheTarget, cacheMaterial(request), context);
  if (cache !== null && cacheKey !== null && cacheMode.lookup) {
    const cached = await cache.lookup(cacheKey);
    if (cached !== null) {
      report(dependencies, context, request, { provider: cached.provider, model: cached.model }, 200, cachedUsage(cached), true);
      return { kind: 'cached', cached };
    }
  }
  const executed = await executePlan(
    plan,
    context,
    dependencies,
    (target) => callMessagesTarget(target, request, context, guard),
    (target, error) => report(dependencies, context, request, targetOf(target), failedStatus(context, error), null),
  );
  const { result, ...execution } = executed;
  const served = targetOf(execution.target);
  const store = cache !== null && cacheKey !== null && cacheMode.store;
  if (result.kind === 'json') {
    report(dependencies, context, request, served, 200, result.usage);
    if (store) cache.store(cacheKey, { kind: 'json', body: result.body, ...served });
    return { kind: 'json', ...execution, body: result.body };
  }
  const finish = (relay: RelayResult): void => {
    if (context.trail && relay.firstByteAt !== undefined) context.trail.firstByteAt = relay.firstByteAt;
    report(dependencies, context, request, served, relay.clientClosed ? 499 : relay.error !== null ? 502 : 200, relay.usage);
    if (store && relay.completed && relay.captured !== null) cache.store(cacheKey, { kind: 'sse', body: relay.captured, ...served });
  };
  return { kind: 'stream', ...execution, stream: result.stream, ...(store ? { captureLimit: cache.maxEntryBytes } : {}), finish };
}

/** One attempt on one target, natively or through chat; an unusable answer fails the attempt. */
async function callMessagesTarget(
  target: ResolvedTarget,
  request: MessagesRequest,
  context: RequestContext,
  guard: ActiveGuardrails | null,
): Promise<CallResult> {
  const api = guard === null ? messagesApiFor(target.adapter, target.model) : undefined;
  if (api !== undefined) {
    const result = await api.create({ body: upstreamBodyOf(request.body, target.model), headers: request.headers }, context);
    if (result.kind === 'stream') return { kind: 'stream', stream: { native: true, upstream: result.body } };
    return { kind: 'json', body: result.body, usage: usageOfMessage(readMessage(result.body, target.adapter.name)) };
  }
  const chat = await callTarget(target, readChatRequest(request.translate().chat), context, guard);
  if (chat.kind === 'stream') return { kind: 'stream', stream: { native: false, upstream: chat.body, chunkOptions: chat.chunkOptions } };
  const message = toMessagesResponse(chat.body, target.model, context.requestId);
  return { kind: 'json', body: JSON.stringify(message), usage: chat.usage };
}

/** A native answer must be a message object; anything else fails the attempt like a 5xx. */
function readMessage(text: string, provider: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!isObject(parsed) || !Array.isArray(parsed['content'])) {
    throw providerError(`upstream ${provider} returned no message`, { provider, code: 'invalid_upstream_response' });
  }
  return parsed;
}

/** The body, plus the beta header when one was sent (betas change the answer). */
function cacheMaterial(request: MessagesRequest): JsonObject {
  const beta = request.headers['anthropic-beta'];
  return beta === undefined ? request.body : { ...request.body, '~anthropic-beta': beta };
}

function cachedUsage(cached: CachedResponse): UsageObject | null {
  if (cached.kind !== 'json') return null;
  try {
    const parsed: unknown = JSON.parse(cached.body);
    return isObject(parsed) ? usageOfMessage(parsed) : null;
  } catch {
    return null;
  }
}

function targetOf(target: ResolvedTarget): { provider: string; model: string } {
  return { provider: target.adapter.name, model: target.model };
}

function failedStatus(context: RequestContext, error: unknown): number {
  return attemptStatus(error, context.signal.aborted);
}

function report(
  dependencies: ChatPipelineDependencies,
  context: RequestContext,
  request: MessagesRequest,
  served: { provider: string; model: string },
  status: number,
  usage: UsageObject | null,
  cacheHit = false,
): void {
  dependencies.metering.report({ context, endpoint, ...served, usage, status, stream: request.stream, ...(cacheHit ? { cacheHit } : {}) });
}
