import type { Admission } from '../admission/admission.ts';
import { PlanAdmission, type AdmissionDependencies, type CostOf } from '../admission/admit.ts';
import { CircuitProbe } from '../admission/circuit-probe.ts';
import { attemptStatus } from '../errors/envelope.ts';
import { GatewayError, providerError } from '../errors/gateway-error.ts';
import { RateLimitRejection } from '../ratelimit/rejection.ts';
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

export interface ExecutionDependencies extends AdmissionDependencies {
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
  costOf?: CostOf,
): Promise<Executed<T>> {
  const attempts = attemptList(plan, context);
  // The request's admission (admission/admit.ts): its user-path slots and budget hold last across every attempt.
  const admission = new PlanAdmission(context.userPath, dependencies, costOf);
  let lastError: unknown = null;
  try {
    for (const [index, target] of plan.candidates.entries()) {
      const record = (outcome: AttemptRecord['outcome'], status?: number, error?: unknown): number =>
        attempts.push(attemptOf(target, outcome, status, error, startedAt, spanId));
      let [startedAt, spanId]: [number | null, string | undefined] = [null, undefined];
      const probe = CircuitProbe.acquire(dependencies.breakers, target.adapter.name);
      if (probe === null) {
        record('skipped_circuit_open');
        lastError ??= circuitOpen(target);
        if (circuitOpenMovesOn(plan.failoverOn)) continue;
        break;
      }
      // A saturated target ends the request unless another candidate follows and the plan moves on.
      const final = index === plan.candidates.length - 1 || !plan.failoverOn.includes('saturated');
      const admitting = admitAttempt(admission, target, final, probe);
      const route = admitting instanceof Promise ? await admitting : admitting;
      if (route instanceof RateLimitRejection) {
        probe.release();
        record('skipped_saturated', 429, route);
        lastError = route;
        continue;
      }
      const leave = dependencies.inFlight.enter(target.adapter.name, target.model);
      startedAt = performance.now();
      try {
        const result = await tracedCall(target, probe, context, dependencies, call, (spanId = spanIdOf(context)));
        record('ok');
        return { result, target, attempts, admission: admission.executed(route, leave) };
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
    admission.abandon(error);
    throw error;
  }
}

/** The attempt's route slots (or the saturated target's refusal); a refusal that ends the request gives the probe back. */
function admitAttempt(
  admission: PlanAdmission,
  target: ResolvedTarget,
  final: boolean,
  probe: CircuitProbe,
): ReturnType<PlanAdmission['admit']> {
  try {
    const admitting = admission.admit(target, final);
    if (!(admitting instanceof Promise)) return admitting;
    return admitting.catch((error: unknown) => {
      probe.release();
      throw error;
    });
  } catch (error) {
    probe.release();
    throw error;
  }
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

/** An attempt's call; while tracing is on, it gets a client span id whose `traceparent` goes on its upstream requests. */
function tracedCall<T>(
  target: ResolvedTarget,
  probe: CircuitProbe,
  context: RequestContext,
  dependencies: ExecutionDependencies,
  call: (target: ResolvedTarget) => Promise<T>,
  spanId: string | undefined,
): Promise<T> {
  const trace = context.trail?.trace;
  // Tracing off: no closure, no AsyncLocalStorage, nothing allocated for traces (ADR 17).
  if (!trace || spanId === undefined) return callWithRetries(target, probe, context, dependencies, call);
  return withTraceparent(traceparentOf(trace, spanId), () => callWithRetries(target, probe, context, dependencies, call));
}

/** A client span id for the attempt while tracing is on. */
const spanIdOf = (context: RequestContext): string | undefined => (context.trail?.trace ? newSpanId() : undefined);

async function callWithRetries<T>(
  target: ResolvedTarget,
  probe: CircuitProbe,
  context: RequestContext,
  dependencies: ExecutionDependencies,
  call: (target: ResolvedTarget) => Promise<T>,
): Promise<T> {
  const instance = target.adapter.name;
  for (let retry = 0; ; retry += 1) {
    try {
      const result = await call(target);
      probe.succeeded();
      return result;
    } catch (error) {
      if (context.signal.aborted) {
        // The client left: that says nothing about the instance, but a claimed probe is given back.
        probe.release();
        throw error;
      }
      if (!fromInstance(error, instance)) {
        // Raised by the gateway itself (client input, a bug): says nothing about the instance.
        probe.release();
        throw error;
      }
      if (error.status >= 500) probe.failed();
      else probe.succeeded();
      if (retry >= dependencies.retries || !transient(error) || !probe.reacquire()) throw error;
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
