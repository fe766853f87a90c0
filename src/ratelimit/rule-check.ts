import type { AdmissionOptions, Breach, RuleCounts } from './counter-store.ts';
import type { RateLimitRule } from './rules.ts';
import { advance, estimate, newWindow, secondsUntilBelow, type WindowCounter } from './sliding-window.ts';

/**
 * The counters of one rule, wherever they are kept: the memory store holds these objects, the
 * Redis store rebuilds them from what its scripts return. Both decide and report with the
 * functions below, so Retry-After and the headers come from the same math.
 */
export interface RuleState {
  requests: WindowCounter;
  tokens: WindowCounter;
  inFlight: number;
}

export const newRuleState = (): RuleState => ({ requests: newWindow(), tokens: newWindow(), inFlight: 0 });

/** Advances the rule's windows to `now` and returns its breach, if any. */
export function breachOf(rule: RateLimitRule, state: RuleState, options: AdmissionOptions, now: number, nowMs: number): Breach | null {
  const period = rule.periodSeconds;
  if (period === 0) {
    if (!options.holdSlot || rule.maxRequests === null || state.inFlight < rule.maxRequests) return null;
    return { rule, kind: 'concurrent', retryAfterMs: 1000 };
  }
  advance(state.requests, now, period);
  advance(state.tokens, now, period);
  const untilMs = (seconds: number): number => (now + seconds) * 1000 - nowMs;
  let breach: Breach | null = null;
  if (rule.maxRequests !== null && estimate(state.requests, now, period) >= rule.maxRequests) {
    breach = { rule, kind: 'requests', retryAfterMs: untilMs(secondsUntilBelow(state.requests, now, period, rule.maxRequests)) };
  }
  if (options.enforceTokens && rule.maxTokens !== null && estimate(state.tokens, now, period) >= rule.maxTokens) {
    const retryAfterMs = untilMs(secondsUntilBelow(state.tokens, now, period, rule.maxTokens));
    if (breach === null || retryAfterMs > breach.retryAfterMs) breach = { rule, kind: 'tokens', retryAfterMs };
  }
  return breach;
}

/** The breach that blocks longest among `rules` (states in the same order), or null. */
export function longestBreach(
  rules: readonly RateLimitRule[],
  states: readonly RuleState[],
  options: AdmissionOptions,
  nowMs: number,
): Breach | null {
  const now = Math.floor(nowMs / 1000);
  let breach: Breach | null = null;
  rules.forEach((rule, index) => {
    const state = states[index];
    const found = state === undefined ? null : breachOf(rule, state, options, now, nowMs);
    if (found !== null && (breach === null || found.retryAfterMs > breach.retryAfterMs)) breach = found;
  });
  return breach;
}

/** The live counters of a rule at `now` (its windows are advanced). */
export function countsOf(rule: RateLimitRule, state: RuleState, now: number): RuleCounts {
  const period = rule.periodSeconds;
  if (period === 0) return { requestsUsed: 0, tokensUsed: 0, inFlight: state.inFlight, windowStart: null, windowEnd: null };
  advance(state.requests, now, period);
  advance(state.tokens, now, period);
  const windowStart = now - (now % period);
  return {
    requestsUsed: estimate(state.requests, now, period),
    tokensUsed: estimate(state.tokens, now, period),
    inFlight: 0,
    windowStart,
    windowEnd: windowStart + period,
  };
}
