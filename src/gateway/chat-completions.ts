import type { Readable } from 'node:stream';
import { assertModelAllowed } from '../auth/allowlist.ts';
import type { BudgetService } from '../budgets/budget-service.ts';
import type { CachedResponse } from '../cache/response-cache.ts';
import type { ResponseCache } from '../cache/response-cache-service.ts';
import { attemptStatus } from '../errors/envelope.ts';
import type { JsonResult, StreamResult } from '../providers/provider.ts';
import type { Admission } from '../admission/admission.ts';
import type { RateLimiter } from '../ratelimit/rate-limiter.ts';
import type { CircuitBreakers } from '../routing/circuit-breaker.ts';
import type { InFlightCounter } from '../routing/in-flight.ts';
import type { ModelCatalog } from '../routing/model-catalog.ts';
import type { ResolvedTarget } from '../routing/resolve-model.ts';
import { planRoute } from '../routing/route-planner.ts';
import type { VirtualModels } from '../routing/virtual-models.ts';
import type { FailoverRules } from '../routing/failover-rules.ts';
import type { ActiveGuardrails, Guardrails } from '../guardrails/pipeline.ts';
import type { ChunkOptions, UsageObject } from '../streaming/chat-chunk.ts';
import type { RelayResult } from '../streaming/relay-chat-stream.ts';
import type { Metering } from '../usage/metering.ts';
import { buildUpstreamBody, readChatRequest, type ChatRequest } from './chat-request.ts';
import { readJsonAnswer } from './json-answer.ts';
import { executePlan, type AttemptRecord } from './execute-plan.ts';
import { reservationCost } from './model-call.ts';
import type { RequestContext } from './request-context.ts';

export type ChatTarget = ResolvedTarget;

interface Executed {
  target: ChatTarget;
  /** Rate-limit headers and slots; the HTTP layer releases them when the response ends. */
  admission: Admission;
  attempts: AttemptRecord[];
}

export type ChatOutcome =
  | { kind: 'cached'; cached: CachedResponse }
  | (Executed & { kind: 'json'; body: string; usage: UsageObject | null })
  | (Executed & {
      kind: 'stream';
      upstream: Readable;
      chunkOptions: ChunkOptions & { captureLimit?: number };
      /** Called by the HTTP layer once the relay has ended. */
      finish: (result: RelayResult) => void;
    });

export interface ChatPipelineDependencies {
  catalog: ModelCatalog;
  metering: Metering;
  /** Null when budgets are off. */
  budgets: BudgetService | null;
  /** Null when rate limits are off. */
  limiter: RateLimiter | null;
  virtualModels: VirtualModels | null;
  /** Failover rules for direct requests; none when absent. */
  failoverRules?: FailoverRules | null;
  breakers: CircuitBreakers;
  inFlight: InFlightCounter;
  /** Null when the response cache is off. */
  cache: ResponseCache | null;
  retries: number;
  retryBaseDelayMs: number;
  /** Null or absent when no guardrail is configured. */
  guardrails?: Guardrails | null;
}

/** What the client's Cache-Control allows for this request. */
export interface CacheMode {
  lookup: boolean;
  store: boolean;
}

const chatEndpoint = '/v1/chat/completions';

/**
 * The chat completions pipeline: read the request, answer from the response cache if it can
 * (before any limit, counting nothing), plan the route, execute it with admission, budgets,
 * retries and failover, meter every executed attempt, and store a successful answer.
 * `endpoint` names the route in usage records and cache keys: `/v1/messages` runs its
 * translated requests through here too.
 */
export async function runChatCompletion(
  body: unknown,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
  cacheMode: CacheMode = { lookup: true, store: true },
  endpoint: string = chatEndpoint,
): Promise<ChatOutcome> {
  const request = readChatRequest(body);
  const guard = dependencies.guardrails?.select(context.userPath, request.selector, endpoint, context) ?? null;
  const plan = await planRoute(request.selector, request.hint, dependencies);
  assertModelAllowed(context.principal, plan, dependencies.virtualModels);
  const cache = dependencies.cache;
  // Guarded requests skip the cache: an answer stored for a request out of scope must not bypass them.
  const cacheKey = cache === null || guard !== null ? null : cache.keyFor(endpoint, plan.cacheTarget, request.body, context);
  if (cache !== null && cacheKey !== null && cacheMode.lookup) {
    const cached = await cache.lookup(cacheKey);
    if (cached !== null) {
      reportCacheHit(cached, context, request, dependencies, endpoint);
      return { kind: 'cached', cached };
    }
  }
  const report = (target: ChatTarget, status: number, usage: UsageObject | null): void =>
    dependencies.metering.report({
      context,
      endpoint,
      provider: target.adapter.name,
      model: target.model,
      usage,
      status,
      stream: request.stream,
    });
  const executed = await executePlan(
    plan,
    context,
    dependencies,
    (target) => callTarget(target, request, context, guard),
    (target, error) => report(target, attemptStatus(error, context.signal.aborted), null),
    reservationCost(request.body, dependencies),
  );
  const { result, target } = executed;
  if (result.kind === 'stream') {
    const store = cache !== null && cacheKey !== null && cacheMode.store;
    // Built field by field: in V8 11 a spread followed by more fields costs microseconds (ADR 0003).
    const chunkOptions: ChunkOptions & { captureLimit?: number } = result.chunkOptions;
    if (store) chunkOptions.captureLimit = cache.maxEntryBytes;
    const finish = (relay: RelayResult): void => {
      if (context.trail && relay.firstByteAt !== undefined) context.trail.firstByteAt = relay.firstByteAt;
      report(target, relay.clientClosed ? 499 : relay.error !== null ? 502 : 200, relay.usage);
      if (store && relay.completed && relay.captured !== null)
        cache.store(cacheKey, { kind: 'sse', body: relay.captured, provider: target.adapter.name, model: target.model });
    };
    const { admission, attempts } = executed;
    return { kind: 'stream', target, admission, attempts, upstream: result.body, chunkOptions, finish };
  }
  report(target, 200, result.usage);
  if (cache !== null && cacheKey !== null && cacheMode.store)
    cache.store(cacheKey, { kind: 'json', body: result.body, provider: target.adapter.name, model: target.model });
  const { admission, attempts } = executed;
  return { kind: 'json', target, admission, attempts, body: result.body, usage: result.usage };
}

export type CallResult =
  { kind: 'json'; body: string; usage: UsageObject | null } | { kind: 'stream'; body: StreamResult['body']; chunkOptions: ChunkOptions };

/** One attempt on one target; an unusable answer fails the attempt (and may fail over). */
export async function callTarget(
  target: ChatTarget,
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

function reportCacheHit(
  cached: CachedResponse,
  context: RequestContext,
  request: ChatRequest,
  dependencies: ChatPipelineDependencies,
  endpoint: string,
): void {
  let usage: UsageObject | null = null;
  if (cached.kind === 'json') {
    try {
      const parsed = JSON.parse(cached.body) as { usage?: unknown };
      usage = typeof parsed.usage === 'object' && parsed.usage !== null ? (parsed.usage as UsageObject) : null;
    } catch {
      usage = null;
    }
  }
  dependencies.metering.report({
    context,
    endpoint,
    provider: cached.provider,
    model: cached.model,
    usage,
    status: 200,
    stream: request.stream,
    cacheHit: true,
  });
}
