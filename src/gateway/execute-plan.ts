import type { BudgetService } from '../budgets/budget-service.ts';
import { GatewayError, providerError } from '../errors/gateway-error.ts';
import type { Admission, RateLimiter } from '../ratelimit/rate-limiter.ts';
import { RateLimitRejection } from '../ratelimit/rejection.ts';
import type { CircuitBreakers } from '../routing/circuit-breaker.ts';
import type { InFlightCounter } from '../routing/in-flight.ts';
import type { ResolvedTarget } from '../routing/resolve-model.ts';
import { targetKey, type RoutePlan } from '../routing/route-planner.ts';
import type { RequestContext } from './request-context.ts';

export interface AttemptRecord {
  provider: string;
  model: string;
  outcome: 'ok' | 'failed' | 'skipped_saturated' | 'skipped_circuit_open';
  status?: number;
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
 * Executes a route plan (STYLE habit 7): each candidate is admitted under its own provider
 * and model rules (user-path rules count the request once), the budget is checked once,
 * the call is retried on the same instance for transient failures, and 5xx, 429, timeouts
 * and connection errors move on to the next candidate. Every executed attempt is reported.
 */
export async function executePlan<T>(
  plan: RoutePlan,
  context: RequestContext,
  dependencies: ExecutionDependencies,
  call: (target: ResolvedTarget) => Promise<T>,
  onFailedAttempt: (target: ResolvedTarget, error: unknown) => void,
): Promise<Executed<T>> {
  const attempts: AttemptRecord[] = [];
  const state = { pathCounted: false, budgetChecked: false };
  let lastError: unknown = null;
  for (const [index, target] of plan.candidates.entries()) {
    const record = (outcome: AttemptRecord['outcome'], status?: number): number =>
      attempts.push({ provider: target.adapter.name, model: target.model, outcome, ...(status === undefined ? {} : { status }) });
    const last = index === plan.candidates.length - 1;
    if (!dependencies.breakers.tryAcquire(target.adapter.name)) {
      record('skipped_circuit_open');
      lastError ??= circuitOpen(target);
      continue;
    }
    let admission: Admission;
    try {
      admission = await admitTarget(target, context, dependencies, state);
    } catch (error) {
      dependencies.breakers.releaseProbe(target.adapter.name);
      if (!(error instanceof RateLimitRejection) || error.scope === 'user_path' || last) throw error;
      record('skipped_saturated', 429);
      lastError = error;
      continue;
    }
    const leave = dependencies.inFlight.enter(targetKey(target));
    try {
      const result = await callWithRetries(target, context, dependencies, call);
      record('ok');
      return { result, target, attempts, admission: { ...admission, release: () => (leave(), admission.release()) } };
    } catch (error) {
      leave();
      admission.release();
      onFailedAttempt(target, error);
      if (context.signal.aborted || !failsOver(error)) throw error;
      record('failed', error instanceof GatewayError ? error.status : 502);
      lastError = error;
    }
  }
  throw lastError ?? providerError('no target could serve the request');
}

async function admitTarget(
  target: ResolvedTarget,
  context: RequestContext,
  dependencies: ExecutionDependencies,
  state: { pathCounted: boolean; budgetChecked: boolean },
): Promise<Admission> {
  const subject = { userPath: context.userPath, provider: target.adapter.name, model: target.model };
  const admission = (await dependencies.limiter?.admit(subject, { pathRules: !state.pathCounted })) ?? noLimits;
  state.pathCounted = true;
  if (!state.budgetChecked) {
    try {
      dependencies.budgets?.check(context.userPath);
    } catch (error) {
      admission.refund();
      throw error;
    }
    state.budgetChecked = true;
  }
  return admission;
}

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
      if (context.signal.aborted) throw error;
      if (countsAsFailure(error)) dependencies.breakers.recordFailure(instance);
      else dependencies.breakers.recordSuccess(instance);
      if (retry >= dependencies.retries || !transient(error) || !dependencies.breakers.tryAcquire(instance)) throw error;
      const delay = dependencies.retryBaseDelayMs * 2 ** retry * (0.8 + Math.random() * 0.4);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** Upstream failures that move on to the next target: 5xx, 429, timeouts, connection errors. */
function failsOver(error: unknown): boolean {
  const fromUpstream = error instanceof GatewayError && !['gateway', 'ratelimit', 'budget'].includes(error.provider);
  return fromUpstream && (error.status >= 500 || error.status === 429);
}

/** Failures that speak against the instance's health (429 and other 4xx do not). */
function countsAsFailure(error: unknown): boolean {
  return !(error instanceof GatewayError) || error.status >= 500;
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

const noLimits: Admission = { headers: {}, release: () => undefined, refund: () => undefined };
