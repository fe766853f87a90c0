import type { Readable } from 'node:stream';
import type { BudgetService } from '../budgets/budget-service.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { ProviderAdapter } from '../providers/provider.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import { resolveModel } from '../routing/resolve-model.ts';
import type { ChunkOptions, UsageObject } from '../streaming/chat-chunk.ts';
import type { RelayResult } from '../streaming/relay-chat-stream.ts';
import type { Admission, RateLimiter } from '../ratelimit/rate-limiter.ts';
import type { Metering } from '../usage/metering.ts';
import { buildUpstreamBody, readChatRequest } from './chat-request.ts';
import { finishChatResponse } from './chat-response.ts';
import type { RequestContext } from './request-context.ts';

export interface ChatTarget {
  adapter: ProviderAdapter;
  model: string;
}

export type ChatOutcome =
  | { kind: 'json'; target: ChatTarget; admission: Admission; body: string; usage: UsageObject | null }
  | {
      kind: 'stream';
      target: ChatTarget;
      /** Rate-limit headers and slots; the HTTP layer releases them when the response ends. */
      admission: Admission;
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
  /** Null when rate limits are off. */
  limiter: RateLimiter | null;
}

const endpoint = '/v1/chat/completions';

/**
 * The chat completions pipeline: read the request, resolve the model to a target, admit it
 * under the rate limits and budgets, call the provider, meter the result. The HTTP layer
 * encodes the outcome and releases the admission when the response ends.
 */
export async function runChatCompletion(
  body: unknown,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ChatOutcome> {
  const request = readChatRequest(body);
  const target = await resolveModel(dependencies.catalog, request.selector, request.hint);
  const admission = await admit(context, target, dependencies);
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
      return { kind: 'stream', target, admission, upstream: result.body, chunkOptions, finish };
    }
    const finished = finishChatResponse(result.body, provider, providerJson);
    report(200, finished.usage);
    return { kind: 'json', target, admission, body: finished.body, usage: finished.usage };
  } catch (error) {
    admission.release();
    if (context.signal.aborted) report(499, null);
    else if (error instanceof GatewayError) report(error.status, null);
    throw error;
  }
}

/** Rate limits first (they count the request), then budgets; a budget refusal gives the admission back. */
async function admit(context: RequestContext, target: ChatTarget, dependencies: ChatPipelineDependencies): Promise<Admission> {
  const admission =
    (await dependencies.limiter?.admit({ userPath: context.userPath, provider: target.adapter.name, model: target.model })) ?? noLimits;
  try {
    dependencies.budgets?.check(context.userPath);
  } catch (error) {
    admission.refund();
    throw error;
  }
  return admission;
}

const noLimits: Admission = { headers: {}, release: () => undefined, refund: () => undefined };
