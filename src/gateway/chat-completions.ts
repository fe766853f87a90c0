import type { Readable } from 'node:stream';
import type { ProviderAdapter } from '../providers/provider.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import { resolveModel } from '../routing/resolve-model.ts';
import type { ChunkOptions, UsageObject } from '../streaming/chat-chunk.ts';
import { buildUpstreamBody, readChatRequest } from './chat-request.ts';
import { finishChatResponse } from './chat-response.ts';
import type { RequestContext } from './request-context.ts';

export interface ChatTarget {
  adapter: ProviderAdapter;
  model: string;
}

export type ChatOutcome =
  | { kind: 'json'; target: ChatTarget; body: string; usage: UsageObject | null }
  | { kind: 'stream'; target: ChatTarget; upstream: Readable; chunkOptions: ChunkOptions };

export interface ChatPipelineDependencies {
  catalog: ModelCatalog;
}

/**
 * The chat completions pipeline: read the request, resolve the model to a target, call the
 * provider. The HTTP layer encodes the outcome.
 */
export async function runChatCompletion(
  body: unknown,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ChatOutcome> {
  const request = readChatRequest(body);
  const target = await resolveModel(dependencies.catalog, request.selector, request.hint);
  const provider = target.adapter.name;
  const providerJson = JSON.stringify(provider);
  const result = await target.adapter.chatCompletion(buildUpstreamBody(request, target.model), {
    signal: context.signal,
    requestId: context.requestId,
  });
  if (result.kind === 'stream') {
    return { kind: 'stream', target, upstream: result.body, chunkOptions: { provider, providerJson, includeUsage: request.includeUsage } };
  }
  const finished = finishChatResponse(result.body, provider, providerJson);
  return { kind: 'json', target, body: finished.body, usage: finished.usage };
}
