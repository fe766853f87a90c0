import type { Readable } from 'node:stream';
import type { CachedResponse } from '../../cache/response-cache.ts';
import type { ActiveGuardrails } from '../../guardrails/pipeline.ts';
import type { JsonResult, StreamResult } from '../../providers/provider.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import type { ChunkOptions, UsageObject } from '../../streaming/chat-chunk.ts';
import { buildUpstreamBody, type ChatRequest } from '../chat-request.ts';
import { readJsonAnswer } from '../json-answer.ts';
import type { RequestContext } from '../request-context.ts';
import type { Answer, EndpointCodec } from '../run-model-request.ts';

export type CallResult =
  { kind: 'json'; body: string; usage: UsageObject | null } | { kind: 'stream'; body: Readable; chunkOptions: ChunkOptions };

/**
 * Chat completions (`/v1/chat/completions`, and the Gemini dialect's translated requests under
 * their own endpoint names): guarded, cached (keyed on the body), the body's estimate reserved.
 */
export function chatCodec(endpoint: string): EndpointCodec<ChatRequest, CallResult> {
  return {
    endpoint,
    guarded: true,
    cache: { material: (request) => request.body, usageOf: cachedChatUsage },
    estimateBody: (request) => request.body,
    call: callTarget,
    answerOf: (result): Answer | null => (result.kind === 'json' ? result : null),
  };
}

export const chatCompletionsCodec = chatCodec('/v1/chat/completions');

/** One attempt on one target; an unusable answer fails the attempt (and may fail over). */
export async function callTarget(
  target: ResolvedTarget,
  request: ChatRequest,
  context: RequestContext,
  guard: ActiveGuardrails | null = null,
): Promise<CallResult> {
  const provider = target.adapter.name;
  const providerJson = JSON.stringify(provider);
  const upstreamBody = buildUpstreamBody(request, target.model);
  // The context itself is the call context: reading its `signal` would make one (see ClientAbort).
  const result: JsonResult | StreamResult = await target.adapter.chatCompletion(
    guard === null ? upstreamBody : await guard.input(upstreamBody),
    context,
  );
  if (result.kind === 'stream') {
    const body = guard === null ? result.body : guard.stream(result.body);
    return { kind: 'stream', body, chunkOptions: { provider, providerJson, includeUsage: request.includeUsage } };
  }
  const finished = readJsonAnswer(result.body, provider, 'choices', { requireItems: true, providerJson });
  return { kind: 'json', body: guard === null ? finished.body : guard.output(finished.body, finished.parsed), usage: finished.usage };
}

/** A cache hit reports the usage its stored JSON answer carries (none for a stream). */
function cachedChatUsage(cached: CachedResponse): UsageObject | null {
  if (cached.kind !== 'json') return null;
  try {
    const parsed = JSON.parse(cached.body) as { usage?: unknown };
    return typeof parsed.usage === 'object' && parsed.usage !== null ? (parsed.usage as UsageObject) : null;
  } catch {
    return null;
  }
}
