import type { Readable } from 'node:stream';
import type { CachedResponse } from '../../cache/response-cache.ts';
import { checkMessagesRequest, toChatRequest, type TranslatedRequest } from '../../dialects/anthropic-messages/convert-request.ts';
import { toMessagesResponse } from '../../dialects/anthropic-messages/convert-response.ts';
import { usageOfMessage } from '../../dialects/anthropic-messages/usage.ts';
import { isObject, type JsonObject } from '../../dialects/anthropic-messages/wire.ts';
import { providerError } from '../../errors/gateway-error.ts';
import type { ActiveGuardrails } from '../../guardrails/pipeline.ts';
import { messagesApiFor } from '../../providers/provider.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import type { ChunkOptions, UsageObject } from '../../streaming/chat-chunk.ts';
import { readChatRequest } from '../chat-request.ts';
import { readModelFields, upstreamBodyOf } from '../model-fields.ts';
import type { RequestContext } from '../request-context.ts';
import type { Answer, EndpointCodec } from '../run-model-request.ts';
import { callTarget } from './chat.ts';

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

export type MessagesResult = { kind: 'json'; body: string; usage: UsageObject | null } | { kind: 'stream'; stream: MessagesStream };

/** Reads a Messages request; the chat translation is made only when a target needs it. */
export function readMessagesRequest(input: unknown, headers: Record<string, string>): MessagesRequest {
  const { body, stream } = checkMessagesRequest(input);
  const { selector, hint } = readModelFields(body);
  let translated: TranslatedRequest | null = null;
  const translate = (): TranslatedRequest => (translated ??= toChatRequest(body));
  return { body, selector, hint, stream, headers, translate };
}

/**
 * `/v1/messages`: the chat pipeline's plan, cache, admission, budgets, retries, failover and
 * metering, with one difference per target: an adapter with the `messagesApi` capability gets
 * the Messages request natively (every field and beta header kept) and its answer is relayed
 * as is; any other gets the chat translation. Guarded requests go through the chat
 * translation, the one shape guardrails read. Cache entries hold what the client received
 * (Messages JSON or events), whichever way it was made. The budget holds the estimate of the
 * Messages body as sent (its `max_tokens` and size, as chat's body): read without translating,
 * so a native request the translation would refuse (server tools) is estimated too.
 */
export const messagesCodec: EndpointCodec<MessagesRequest, MessagesResult> = {
  endpoint,
  guarded: true,
  cache: { material: cacheMaterial, usageOf: cachedUsage },
  estimateBody: (request) => request.body,
  prepare: (request, plan, guard) => {
    // A request no candidate can take natively fails on its translation before anything counts it.
    if (guard !== null || plan.candidates.every((target) => messagesApiFor(target.adapter, target.model) === undefined))
      request.translate();
  },
  call: callMessagesTarget,
  answerOf: (result): Answer | null => (result.kind === 'json' ? result : null),
};

/** One attempt on one target, natively or through chat; an unusable answer fails the attempt. */
async function callMessagesTarget(
  target: ResolvedTarget,
  request: MessagesRequest,
  context: RequestContext,
  guard: ActiveGuardrails | null,
): Promise<MessagesResult> {
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
