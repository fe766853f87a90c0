import type { BudgetService } from '../budgets/budget-service.ts';
import { noReservation, type BudgetReservation } from '../budgets/reservation.ts';
import { attemptStatus } from '../errors/envelope.ts';
import { GatewayError, providerError } from '../errors/gateway-error.ts';
import { noAdmission, type Admission, type AdmissionRequest, type RateLimiter } from '../ratelimit/rate-limiter.ts';
import { mergeRateLimitHeaders, RateLimitRejection } from '../ratelimit/rejection.ts';
import type { CircuitBreakers } from '../routing/circuit-breaker.ts';
import { circuitOpenMovesOn, type FailoverTrigger } from '../routing/failover-rule.ts';
import type { InFlightCounter } from '../routing/in-flight.ts';
import type { ResolvedTarget } from '../routing/resolve-model.ts';
import type { RoutePlan } from '../routing/route-planner.ts';
import type { RequestContext } from './request-context.ts';
import { newSpanId, traceparentOf, withTraceparent } from '../core/trace-context.ts';

export interface AttemptRecord {
  provider: string;
  model: string;
  outcome: 'ok' | 'failed' | 'skipped_saturated' | 'skipped_circuit_open';
  status?: number;
  /** Executed attempts: milliseconds from admission to the answer or failure (retries included). */
  latencyMs?: number;
  /** Failed or skipped attempts: the error's code. */
  errorCode?: string | null;
  /** Executed attempts: `performance.now()` at the call (traces). */
  startedAt?: number;
  /** While tracing is on: the attempt's client span, the parent named in its upstream `traceparent`. */
  spanId?: string;
}

export interface ExecutionDependencies {
  limiter: RateLimiter | null;
  budgets: BudgetService | null;
  breakers: CircuitBreakers;
  inFlight: InFlightCounter;
  /** Extra tries on the same instance after a connection error, 502 or 503. */
  retries: number;
  retryBaseDelayMs: number;
}

export interface Executed<T> {
  result: T;
  target: ResolvedTarget;
  /** The executed target's admission; releasing it also ends its in-flight count. */
  admission: Admission;
  attempts: AttemptRecord[];
}

/**
 * Executes a route plan (STYLE habit 7): user-path rules admit the request once (and hold
 * their slots across attempts), the budget is checked once, each candidate is admitted
 * under its own provider and model rules,
 * the call is retried on the same instance for transient failures, and the failures the plan
 * names (5xx, 429, timeouts, connection errors, saturation; all of them but for a failover
 * rule's `on`) move on to the next candidate. Every executed attempt is reported.
 * `costOf` prices the request's largest cost on a target (null: unknown): the budget
 * reservation held from admission until the response ends, moved to each target tried.
 */
export async function executePlan<T>(
  plan: RoutePlan,
  context: RequestContext,
  dependencies: ExecutionDependencies,
  call: (target: ResolvedTarget) => Promise<T>,
  onFailedAttempt: (target: ResolvedTarget, error: unknown) => void,
  costOf: (target: ResolvedTarget) => number | null = () => null,
): Promise<Executed<T>> {
  const attempts = attemptList(plan, context);
  // The request's own (user-path) admission: taken with the first candidate's route rules in one
  // atomic step, held across every attempt, given back when the response ends (with the budget reservation).
  let path: Admission | null = null;
  let reservation: BudgetReservation | null = null;
  let lastError: unknown = null;
  try {
    for (const [index, target] of plan.candidates.entries()) {
      const record = (outcome: AttemptRecord['outcome'], status?: number, error?: unknown): number =>
        attempts.push(attemptOf(target, outcome, status, error, startedAt, spanId));
      let [startedAt, spanId]: [number | null, string | undefined] = [null, undefined];
      if (!dependencies.breakers.tryAcquire(target.adapter.name)) {
        record('skipped_circuit_open');
        lastError ??= circuitOpen(target);
        if (circuitOpenMovesOn(plan.failoverOn)) continue;
        break;
      }
      // A saturated target ends the request unless another candidate follows and the plan moves on.
      const final = index === plan.candidates.length - 1 || !plan.failoverOn.includes('saturated');
      const admitting = admitTarget(target, context, dependencies, path, final, costOf);
      const admitted = admitting instanceof Promise ? await admitting : admitting;
      reservation = followReservation(reservation, admitted, () => costOf(target));
      path = admitted.path;
      const route = admitted.route;
      if (route === null) {
        dependencies.breakers.releaseProbe(target.adapter.name);
        record('skipped_saturated', 429, admitted.rejection);
        lastError = admitted.rejection;
        continue;
      }
      const leave = dependencies.inFlight.enter(target.adapter.name, target.model);
      startedAt = performance.now();
      try {
        const result = await tracedCall(target, context, dependencies, call, (spanId = spanIdOf(context)));
        record('ok');
        return { result, target, attempts, admission: combine(path, route, leave) };
      } catch (error) {
        leave();
        route.release();
        onFailedAttempt(target, error);
        const aborted = context.signal.aborted;
        record('failed', attemptStatus(error, aborted), error);
        if (aborted || !failsOver(error, plan.failoverOn)) throw error;
        lastError = error;
      }
    }
    throw lastError ?? providerError('no target could serve the request');
  } catch (error) {
    // Nothing executed for a request every target's rules refused: nothing stays counted.
    if (error instanceof RateLimitRejection) path?.refund();
    else path?.release();
    throw error;
  }
}

/** The executed target pays: the budget hold taken at the first admission follows each target tried. */
function followReservation(current: BudgetReservation | null, admitted: Admitted, cost: () => number | null): BudgetReservation | null {
  if (current === null) return admitted.reservation ?? null;
  if (current !== noReservation) current.move(cost() ?? 0);
  return current;
}

/** The request's attempt list; the request log reads the same array (filled as attempts are made) and the plan's virtual model. */
function attemptList(plan: RoutePlan, context: RequestContext): AttemptRecord[] {
  const attempts: AttemptRecord[] = [];
  const trail = context.trail;
  if (trail) {
    trail.virtualModel = plan.virtualModel;
    trail.attempts = attempts;
  }
  return attempts;
}

function attemptOf(
  target: ResolvedTarget,
  outcome: AttemptRecord['outcome'],
  status: number | undefined,
  error: unknown,
  startedAt: number | null,
  spanId: string | undefined,
): AttemptRecord {
  const record: AttemptRecord = { provider: target.adapter.name, model: target.model, outcome };
  if (status !== undefined) record.status = status;
  if (startedAt !== null) {
    record.latencyMs = Math.round((performance.now() - startedAt) * 10) / 10;
    record.startedAt = startedAt;
  }
  if (spanId !== undefined) record.spanId = spanId;
  if (error !== undefined) record.errorCode = error instanceof GatewayError ? error.code : 'upstream_error';
  return record;
}

type Admitted = { reservation?: BudgetReservation } & (
  { path: Admission; route: Admission; rejection?: undefined } | { path: Admission; route: null; rejection: RateLimitRejection }
);

/**
 * The first admitted attempt takes the user-path and route rules together (so a breach
 * reports the rule that blocks longest) and reserves the budget; later attempts take only
 * their route rules. A saturated target that is not the last gives `route: null`; the last
 * one's refusal is thrown.
 */
async function admitAttempt(
  target: ResolvedTarget,
  context: RequestContext,
  dependencies: ExecutionDependencies,
  path: Admission | null,
  last: boolean,
  costOf: (target: ResolvedTarget) => number | null,
): Promise<Admitted> {
  const limiter = dependencies.limiter;
  const subject = { userPath: context.userPath, provider: target.adapter.name, model: target.model };
  try {
    if (path !== null) return { path, route: (await limiter?.admit(subject, { pathRules: false })) ?? noAdmission };
    const parts = ((await limiter?.admit(subject)) ?? noAdmission).split();
    const reservation = await reserveBudget(context, dependencies, () => costOf(target), parts.path, parts.route);
    return { path: withReservation(parts.path, reservation), route: parts.route, reservation };
  } catch (error) {
    if (!(error instanceof RateLimitRejection) || error.scope === 'user_path' || last) throw error;
    if (path !== null) return { path, route: null, rejection: error };
    // This target is saturated: count the request on its user path alone, and move on.
    const own = (await limiter?.admit(subject, { routeRules: false })) ?? noAdmission;
    const reservation = await reserveBudget(context, dependencies, () => costOf(target), own);
    return { path: withReservation(own, reservation), route: null, rejection: error, reservation };
  }
}

/** The attempt's admission: at once when nothing applies, else `admitAttempt`'s (a refusal gives a claimed probe back). */
function admitTarget(
  target: ResolvedTarget,
  context: RequestContext,
  dependencies: ExecutionDependencies,
  path: Admission | null,
  last: boolean,
  costOf: (target: ResolvedTarget) => number | null,
): Admitted | Promise<Admitted> {
  return (
    admittedAtOnce(target, context, dependencies, path) ??
    admitAttempt(target, context, dependencies, path, last, costOf).catch((error: unknown) => {
      dependencies.breakers.releaseProbe(target.adapter.name);
      throw error;
    })
  );
}

/**
 * What `admitAttempt` gives when no rate-limit rule counts the attempt and no budget covers its
 * path (nothing to count, hold or refuse), without its promises; null when something applies.
 */
function admittedAtOnce(
  target: ResolvedTarget,
  context: RequestContext,
  dependencies: ExecutionDependencies,
  path: Admission | null,
): Admitted | null {
  const limiter = dependencies.limiter;
  if (limiter !== null) {
    const subject = { userPath: context.userPath, provider: target.adapter.name, model: target.model };
    if (limiter.matches(subject, path === null ? undefined : { pathRules: false })) return null;
  }
  if (path !== null) return { path, route: noAdmission };
  if (dependencies.budgets?.covers(context.userPath) === true) return null;
  return { path: noAdmission, route: noAdmission, reservation: noReservation };
}

/** The budget reservation of a request (budget.reserve), undoing `admissions` when it is refused. */
async function reserveBudget(
  context: RequestContext,
  dependencies: Pick<ExecutionDependencies, 'budgets'>,
  cost: () => number | null,
  ...admissions: Admission[]
): Promise<BudgetReservation> {
  try {
    return (await dependencies.budgets?.reserve(context.userPath, cost)) ?? noReservation;
  } catch (error) {
    for (const admission of admissions) admission.refund();
    throw error;
  }
}

/**
 * The user-path admission that also gives the budget reservation back when it ends. The slots go
 * at once (before the answer's last bytes, ClientAbort.whenClosed); the hold a turn later, after
 * the usage report that a stream relay makes once it has ended the response: the hold and the
 * charge overlap for a moment rather than leave a gap (reservation.ts).
 */
function withReservation(path: Admission, reservation: BudgetReservation): Admission {
  if (reservation === noReservation) return path;
  return {
    headers: path.headers,
    release: () => (path.release(), setImmediate(() => reservation.release())),
    refund: () => (path.refund(), reservation.release()),
    split: () => ({ path: withReservation(path, reservation), route: noAdmission }),
  };
}

/**
 * Admission for a request that is not a planned model call (a batch submission, a passthrough
 * call): the rules of its user path and of the route it names (`request` says which, and
 * whether slots are held), then its budget reservation, the same as a planned call's
 * (`cost`: the request's largest cost, null or absent: refused once spent, nothing held).
 * The caller releases the admission when done; that gives the hold back a turn later, after
 * the usage report.
 */
export async function admitRequest(
  context: RequestContext,
  dependencies: Pick<ExecutionDependencies, 'limiter' | 'budgets'>,
  route: { provider?: string; model?: string },
  request: AdmissionRequest = {},
  cost: () => number | null = () => null,
): Promise<Admission> {
  // Fields set on a literal: in V8 11 a spread followed by a field costs about a microsecond (ADR 27).
  const subject = { provider: route.provider, model: route.model, userPath: context.userPath };
  const admission = (await dependencies.limiter?.admit(subject, request)) ?? noAdmission;
  if (dependencies.budgets?.covers(context.userPath) !== true) return admission;
  return withReservation(admission, await reserveBudget(context, dependencies, cost, admission));
}

function combine(path: Admission, route: Admission, leave: () => void): Admission {
  const admission: Admission = {
    headers: mergeRateLimitHeaders(path.headers, route.headers),
    release: () => (leave(), route.release(), path.release()),
    refund: () => (leave(), route.refund(), path.refund()),
    split: () => ({ path, route }),
  };
  return admission;
}

/** An attempt's call; while tracing is on, it gets a client span id whose `traceparent` goes on its upstream requests. */
function tracedCall<T>(
  target: ResolvedTarget,
  context: RequestContext,
  dependencies: ExecutionDependencies,
  call: (target: ResolvedTarget) => Promise<T>,
  spanId: string | undefined,
): Promise<T> {
  const trace = context.trail?.trace;
  // Tracing off: no closure, no AsyncLocalStorage, nothing allocated for traces (ADR 17).
  if (!trace || spanId === undefined) return callWithRetries(target, context, dependencies, call);
  return withTraceparent(traceparentOf(trace, spanId), () => callWithRetries(target, context, dependencies, call));
}

/** A client span id for the attempt while tracing is on. */
const spanIdOf = (context: RequestContext): string | undefined => (context.trail?.trace ? newSpanId() : undefined);

async function callWithRetries<T>(
  target: ResolvedTarget,
  context: RequestContext,
  dependencies: ExecutionDependencies,
  call: (target: ResolvedTarget) => Promise<T>,
): Promise<T> {
  const instance = target.adapter.name;
  for (let retry = 0; ; retry += 1) {
    try {
      const result = await call(target);
      dependencies.breakers.recordSuccess(instance);
      return result;
    } catch (error) {
      if (context.signal.aborted) {
        // The client left: that says nothing about the instance, but a claimed probe is given back.
        dependencies.breakers.releaseProbe(instance);
        throw error;
      }
      if (!fromInstance(error, instance)) {
        // Raised by the gateway itself (client input, a bug): says nothing about the instance.
        dependencies.breakers.releaseProbe(instance);
        throw error;
      }
      if (error.status >= 500) dependencies.breakers.recordFailure(instance);
      else dependencies.breakers.recordSuccess(instance);
      if (retry >= dependencies.retries || !transient(error) || !dependencies.breakers.tryAcquire(instance)) throw error;
      const delay = dependencies.retryBaseDelayMs * 2 ** retry * (0.8 + Math.random() * 0.4);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** Upstream failures that move on to the next target when the plan names them: 5xx, 429, timeouts, connection errors. */
function failsOver(error: unknown, on: readonly FailoverTrigger[]): boolean {
  const trigger = upstreamFailure(error);
  return trigger !== null && on.includes(trigger);
}

/** Which failover trigger an upstream failure is; null for everything else (4xx, the gateway's own errors). */
export function upstreamFailure(error: unknown): FailoverTrigger | null {
  if (!(error instanceof GatewayError) || ['gateway', 'ratelimit', 'budget'].includes(error.provider)) return null;
  if (error.status === 429) return '429';
  if (error.code === 'upstream_timeout') return 'timeout';
  if (error.code === 'upstream_unreachable') return 'connection';
  return error.status >= 500 ? '5xx' : null;
}

/**
 * Outcomes of the upstream call itself (its answers, network failures and timeouts, all
 * mapped to GatewayErrors naming the instance). Only these touch the circuit breaker: 5xx
 * speak against the instance's health, 429 and other 4xx do not.
 */
function fromInstance(error: unknown, instance: string): error is GatewayError {
  return error instanceof GatewayError && error.provider === instance;
}

/**
 * Failures worth one more try on the same instance: the request never reached it, or the
 * upstream itself answered 502/503. Timeouts are not retried (the upstream may still be
 * working, and billing); failover handles them.
 */
function transient(error: unknown): boolean {
  if (!(error instanceof GatewayError)) return false;
  return error.code === 'upstream_unreachable' || (error.code === 'upstream_error' && (error.status === 502 || error.status === 503));
}

function circuitOpen(target: ResolvedTarget): GatewayError {
  return new GatewayError('provider_error', `provider ${target.adapter.name} is failing repeatedly; its circuit breaker is open`, {
    provider: target.adapter.name,
    status: 503,
    code: 'circuit_open',
  });
}
