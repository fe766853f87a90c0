import { assertModelAllowed } from '../auth/allowlist.ts';
import { attemptStatus } from '../errors/envelope.ts';
import { invalidRequest } from '../errors/gateway-error.ts';
import type { ResolvedTarget } from '../routing/resolve-model.ts';
import { planRoute, type RoutePlan } from '../routing/route-planner.ts';
import type { UsageObject } from '../streaming/chat-chunk.ts';
import { reservationCost, type ChatPipelineDependencies } from './pipeline-dependencies.ts';
import { executePlan, type Executed } from './execute-plan.ts';
import type { RequestContext } from './request-context.ts';

export interface ModelCall<T> {
  /** The endpoint as recorded in usage, e.g. `/v1/embeddings`. */
  endpoint: string;
  /** The request's `model`: `<instance>/<model>`, a bare id or a virtual model. */
  selector: string;
  /** The `provider` routing hint, if the request had one. */
  hint?: string;
  stream: boolean;
  /** The plan, when the caller chose the target itself (a request without a model); else planned from `selector`. */
  plan?: RoutePlan;
  /** Whether a target's instance can serve the endpoint: the others leave the plan (400 when none is left). */
  serves?: (target: ResolvedTarget) => boolean;
  /**
   * What the budget reservation is estimated from (estimate.ts): the JSON body, or the text
   * fields of a multipart form or a session's query. Every call that may bill reserves its
   * estimate at admission; null only for calls that bill nothing (token counting), which are
   * still refused once a budget is spent.
   */
  body: Readonly<Record<string, unknown>> | null;
  /** One attempt on one target; a GatewayError from the upstream fails over like chat does. */
  call: (target: ResolvedTarget) => Promise<T>;
}

export interface ModelCallOutcome<T> extends Executed<T> {
  /**
   * Records the executed request's usage once its response is complete (status 200, or 499
   * when the client left, 502 when the upstream broke off). Call it exactly once.
   */
  report: (status: number, usage: UsageObject | null) => void;
}

/**
 * The pipeline every model endpoint besides chat shares: plan the route for the request's
 * model, execute it under rate limits, budgets, retries and failover (execute-plan.ts), and
 * meter every failed attempt at once and the executed one when the caller reports it.
 * The caller releases `admission` when its response has ended.
 */
export async function runModelCall<T>(
  request: ModelCall<T>,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ModelCallOutcome<T>> {
  const planned = request.plan ?? (await planRoute(request.selector, request.hint, dependencies));
  assertModelAllowed(context.principal, planned, dependencies.virtualModels);
  const plan = request.serves === undefined ? planned : servedPart(planned, request.serves, request.endpoint);
  const report = (target: ResolvedTarget, status: number, usage: UsageObject | null): void =>
    dependencies.metering.report({
      context,
      endpoint: request.endpoint,
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
    request.call,
    (target, error) => report(target, attemptStatus(error, context.signal.aborted), null),
    request.body === null ? undefined : reservationCost(request.body, dependencies),
  );
  let reported = false;
  return {
    ...executed,
    report: (status, usage) => {
      if (reported) return;
      reported = true;
      report(executed.target, status, usage);
    },
  };
}

/** The plan without the targets whose instance cannot serve the endpoint; 400 naming them when none is left. */
function servedPart(plan: RoutePlan, serves: (target: ResolvedTarget) => boolean, endpoint: string): RoutePlan {
  const candidates = plan.candidates.filter(serves);
  if (candidates.length > 0) return candidates.length === plan.candidates.length ? plan : { ...plan, candidates };
  const names = plan.candidates.map((target) => `"${target.adapter.name}" (type ${target.adapter.type})`).join(', ');
  throw invalidRequest(`provider instance ${names} cannot serve ${endpoint}`, { code: 'unsupported_endpoint', param: 'model' });
}
