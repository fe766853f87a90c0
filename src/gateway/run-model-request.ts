import type { Admission } from '../admission/admission.ts';
import { assertModelAllowed } from '../auth/allowlist.ts';
import { estimateTokens, type TokenEstimate } from '../budgets/estimate.ts';
import type { CachedResponse } from '../cache/response-cache.ts';
import type { ResponseCache } from '../cache/response-cache-service.ts';
import { attemptStatus } from '../errors/envelope.ts';
import { invalidRequest } from '../errors/gateway-error.ts';
import type { ActiveGuardrails } from '../guardrails/pipeline.ts';
import type { ResolvedTarget } from '../routing/resolve-model.ts';
import { planRoute, type RoutePlan } from '../routing/route-planner.ts';
import type { ExecutionReport } from '../usage/metering.ts';
import { executePlan, type AttemptRecord, type Executed } from './execute-plan.ts';
import type { CacheMode, ChatPipelineDependencies } from './pipeline-dependencies.ts';
import type { RequestContext } from './request-context.ts';

/** What every endpoint's request routes on, as its codec read it. */
export interface ModelRequest {
  /** The request's `model`: `<instance>/<model>`, a bare id or a virtual model. */
  readonly selector: string;
  /** The `provider` routing hint, if the request had one. */
  readonly hint: string | undefined;
  readonly stream: boolean;
  /** The plan, when the caller chose the target itself (a request without a model); else planned from `selector`. */
  readonly plan?: RoutePlan;
}

export type Usage = ExecutionReport['usage'];

/** A finished JSON answer: metered (and cached) as soon as the call returns it. */
export interface Answer {
  body: string;
  usage: Usage;
}

/**
 * One endpoint's part of the pipeline (gateway/endpoints/): what the shared steps of
 * `runModelRequest` need to know about its requests and answers.
 */
export interface EndpointCodec<Q extends ModelRequest, R> {
  /** The endpoint in usage records, cache keys and guardrail scopes, e.g. `/v1/embeddings`. */
  readonly endpoint: string;
  /** Guardrails in scope are selected for the request and handed to `call` (which must honour them). */
  readonly guarded: boolean;
  /** Whether a target's instance can serve the endpoint: the others leave the plan (400 when none is left). */
  readonly serves?: (target: ResolvedTarget) => boolean;
  /** Present when the endpoint's answers are cached: what the key hashes, the usage a hit reports. */
  readonly cache?: { material(request: Q): Parameters<ResponseCache['keyFor']>[2]; usageOf(cached: CachedResponse): Usage };
  /**
   * What the budget reservation is estimated from (estimate.ts): the JSON body, or the text
   * fields of a form or a session's query; null for calls that bill nothing (still refused once
   * a budget is spent).
   */
  estimateBody(request: Q): Readonly<Record<string, unknown>> | null;
  /** Checks made with the plan before anything counts the request. */
  prepare?(request: Q, plan: RoutePlan, guard: ActiveGuardrails | null): void;
  /** One attempt on one target; a GatewayError from the upstream fails over. */
  call(target: ResolvedTarget, request: Q, context: RequestContext, guard: ActiveGuardrails | null): Promise<R>;
  /** The answer when it is finished JSON; null for a stream (or session) the HTTP layer relays and then finishes. */
  answerOf(result: R): Answer | null;
}

/** How a relayed stream ended (the relays' results have these fields). */
export interface RelayEnd {
  usage: Usage;
  clientClosed: boolean;
  error: unknown;
  completed?: boolean;
  /** What the client received, when capture was asked for (`captureLimit`) and stayed under it. */
  captured?: string | null;
  firstByteAt?: number | null;
}

export type ModelOutcome<R> =
  { kind: 'cached'; cached: CachedResponse } | (Executed<R> & { kind: 'json'; body: string; usage: Usage }) | StreamOutcome<R>;

/**
 * An executed request whose answer the HTTP layer relays: `finish` once a stream relay has
 * ended (usage, first byte, cache store), or `report` for byte relays and sessions. The
 * executed attempt is metered exactly once, whichever is called and however often.
 */
export class StreamOutcome<R> implements Executed<R> {
  readonly kind = 'stream';
  readonly result: R;
  readonly target: ResolvedTarget;
  readonly admission: Admission;
  readonly attempts: AttemptRecord[];
  /** Capture the relayed stream up to this many characters (the response cache stores it). */
  readonly captureLimit: number | undefined;
  private readonly endpoint: string;
  private readonly stream: boolean;
  private readonly context: RequestContext;
  private readonly metering: ChatPipelineDependencies['metering'];
  private readonly store: { cache: ResponseCache; key: string } | null;
  private reported = false;

  constructor(
    executed: Executed<R>,
    endpoint: string,
    stream: boolean,
    context: RequestContext,
    dependencies: ChatPipelineDependencies,
    store: { cache: ResponseCache; key: string } | null,
  ) {
    this.result = executed.result;
    this.target = executed.target;
    this.admission = executed.admission;
    this.attempts = executed.attempts;
    this.endpoint = endpoint;
    this.stream = stream;
    this.context = context;
    this.metering = dependencies.metering;
    this.store = store;
    this.captureLimit = store === null ? undefined : store.cache.maxEntryBytes;
  }

  /** Records the executed request's usage once its answer is complete (200, 499 when the client left, 502 when the upstream broke off). */
  report(status: number, usage: Usage): void {
    if (this.reported) return;
    this.reported = true;
    reportAttempt(this.metering, this.context, this.endpoint, this.target, status, usage, this.stream);
  }

  /** Called once a stream relay has ended. */
  finish(relay: RelayEnd): void {
    const trail = this.context.trail;
    if (trail && relay.firstByteAt !== undefined) trail.firstByteAt = relay.firstByteAt;
    this.report(relay.clientClosed ? 499 : relay.error !== null ? 502 : 200, relay.usage);
    const store = this.store;
    if (store !== null && relay.completed === true && relay.captured !== undefined && relay.captured !== null) {
      store.cache.store(store.key, { kind: 'sse', body: relay.captured, provider: this.target.adapter.name, model: this.target.model });
    }
  }
}

/**
 * The one pipeline of every model endpoint: plan the route (or take the given plan), check the
 * allowlist on what runs, keep the targets that serve the endpoint, select guardrails, answer
 * from the response cache when the codec allows it (before any limit, counting nothing; guarded
 * requests skip the cache), then execute the plan under admission, retries and failover
 * (execute-plan.ts), metering every failed attempt at once and the executed one exactly once:
 * a JSON answer here (and stored), a relayed one when the HTTP layer finishes it.
 */
export async function runModelRequest<Q extends ModelRequest, R>(
  codec: EndpointCodec<Q, R>,
  request: Q,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
  cacheMode: CacheMode = noCache,
): Promise<ModelOutcome<R>> {
  const endpoint = codec.endpoint;
  const planned = request.plan ?? (await planRoute(request.selector, request.hint, dependencies));
  assertModelAllowed(context.principal, planned, dependencies.virtualModels);
  const plan = codec.serves === undefined ? planned : servedPart(planned, codec.serves, endpoint);
  const guard = codec.guarded ? (dependencies.guardrails?.select(context.userPath, request.selector, endpoint, context) ?? null) : null;
  codec.prepare?.(request, plan, guard);
  const cache = codec.cache === undefined || guard !== null ? null : dependencies.cache;
  const key =
    cache === null || codec.cache === undefined ? null : cache.keyFor(endpoint, plan.cacheTarget, codec.cache.material(request), context);
  if (cache !== null && key !== null && cacheMode.lookup && codec.cache !== undefined) {
    const cached = await cache.lookup(key);
    if (cached !== null) {
      reportCacheHit(dependencies, context, endpoint, cached, codec.cache.usageOf(cached), request.stream);
      return { kind: 'cached', cached };
    }
  }
  const metering = dependencies.metering;
  const estimateBody = codec.estimateBody(request);
  const executed = await executePlan(
    plan,
    context,
    dependencies,
    (target) => codec.call(target, request, context, guard),
    (target, error) =>
      reportAttempt(metering, context, endpoint, target, attemptStatus(error, context.signal.aborted), null, request.stream),
    estimateBody === null ? undefined : reservationCost(estimateBody, dependencies),
  );
  const { result, target } = executed;
  const store = cache !== null && key !== null && cacheMode.store ? { cache, key } : null;
  const answer = codec.answerOf(result);
  if (answer === null) return new StreamOutcome(executed, endpoint, request.stream, context, dependencies, store);
  reportAttempt(metering, context, endpoint, target, 200, answer.usage, request.stream);
  if (store !== null) store.cache.store(store.key, { kind: 'json', body: answer.body, provider: target.adapter.name, model: target.model });
  const { admission, attempts } = executed;
  return { kind: 'json', result, target, admission, attempts, body: answer.body, usage: answer.usage };
}

const noCache: CacheMode = Object.freeze({ lookup: false, store: false });

function reportAttempt(
  metering: ChatPipelineDependencies['metering'],
  context: RequestContext,
  endpoint: string,
  target: ResolvedTarget,
  status: number,
  usage: Usage,
  stream: boolean,
): void {
  // Built field by field: in V8 11 a spread followed by more fields costs microseconds (ADR 0003).
  metering.report({ context, endpoint, provider: target.adapter.name, model: target.model, usage, status, stream });
}

function reportCacheHit(
  dependencies: ChatPipelineDependencies,
  context: RequestContext,
  endpoint: string,
  cached: CachedResponse,
  usage: Usage,
  stream: boolean,
): void {
  dependencies.metering.report({
    context,
    endpoint,
    provider: cached.provider,
    model: cached.model,
    usage,
    status: 200,
    stream,
    cacheHit: true,
  });
}

/** The plan without the targets whose instance cannot serve the endpoint; 400 naming them when none is left. */
function servedPart(plan: RoutePlan, serves: (target: ResolvedTarget) => boolean, endpoint: string): RoutePlan {
  const candidates = plan.candidates.filter(serves);
  if (candidates.length > 0) return candidates.length === plan.candidates.length ? plan : { ...plan, candidates };
  const names = plan.candidates.map((target) => `"${target.adapter.name}" (type ${target.adapter.type})`).join(', ');
  throw invalidRequest(`provider instance ${names} cannot serve ${endpoint}`, { code: 'unsupported_endpoint', param: 'model' });
}

/**
 * Prices a request's budget reservation on each target tried: its token estimate (computed
 * once, and only when a budget may need it) at the target's price.
 */
export function reservationCost(
  body: Readonly<Record<string, unknown>>,
  dependencies: Pick<ChatPipelineDependencies, 'budgets' | 'metering'>,
): ((target: ResolvedTarget) => number | null) | undefined {
  if (dependencies.budgets === null) return undefined;
  let estimate: TokenEstimate | null = null;
  return (target) => {
    estimate ??= estimateTokens(body);
    return dependencies.metering.costEstimate(target.adapter.name, target.model, estimate);
  };
}
