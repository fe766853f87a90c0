import type { Readable } from 'node:stream';
import type { BudgetService } from '../budgets/budget-service.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { ProviderAdapter } from '../providers/provider.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import { resolveModel } from '../routing/resolve-model.ts';
import type { ChunkOptions, UsageObject } from '../streaming/chat-chunk.ts';
import type { RelayResult } from '../streaming/relay-chat-stream.ts';
import type { Metering } from '../usage/metering.ts';
import { buildUpstreamBody, readChatRequest } from './chat-request.ts';
import { finishChatResponse } from './chat-response.ts';
import type { RequestContext } from './request-context.ts';

export interface ChatTarget {
  adapter: ProviderAdapter;
  model: string;
}

export type ChatOutcome =
  | { kind: 'json'; target: ChatTarget; body: string; usage: UsageObject | null }
  | {
      kind: 'stream';
      target: ChatTarget;
      upstream: Readable;
      chunkOptions: ChunkOptions;
      /** Called by the HTTP layer once the relay has ended. */
      finish: (result: RelayResult) => void;
    };

export interface ChatPipelineDependencies {
  catalog: ModelCatalog;
  metering: Metering;
  /** Null when budgets are off. */
  budgets: BudgetService | null;
}

const endpoint = '/v1/chat/completions';

/**
 * The chat completions pipeline: read the request, resolve the model to a target, check the
 * budgets, call the provider, meter the result. The HTTP layer encodes the outcome.
 */
export async function runChatCompletion(
  body: unknown,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ChatOutcome> {
  const request = readChatRequest(body);
  const target = await resolveModel(dependencies.catalog, request.selector, request.hint);
  dependencies.budgets?.check(context.userPath);
  const provider = target.adapter.name;
  const providerJson = JSON.stringify(provider);
  const report = (status: number, usage: UsageObject | null): void =>
    dependencies.metering.report({ context, endpoint, provider, model: target.model, usage, status, stream: request.stream });
  try {
    const result = await target.adapter.chatCompletion(buildUpstreamBody(request, target.model), {
      signal: context.signal,
      requestId: context.requestId,
    });
    if (result.kind === 'stream') {
      const chunkOptions = { provider, providerJson, includeUsage: request.includeUsage };
      const finish = (relay: RelayResult): void => report(relay.clientClosed ? 499 : relay.error !== null ? 502 : 200, relay.usage);
      return { kind: 'stream', target, upstream: result.body, chunkOptions, finish };
    }
    const finished = finishChatResponse(result.body, provider, providerJson);
    report(200, finished.usage);
    return { kind: 'json', target, body: finished.body, usage: finished.usage };
  } catch (error) {
    if (context.signal.aborted) report(499, null);
    else if (error instanceof GatewayError) report(error.status, null);
    throw error;
  }
}
