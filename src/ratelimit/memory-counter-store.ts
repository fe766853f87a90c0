import type { AdmissionOptions, AdmissionResult, Breach, RateLimitCounterStore, RuleCounts } from './counter-store.ts';
import type { RateLimitRule } from './rules.ts';
import { advance, estimate, newWindow, secondsUntilBelow, type WindowCounter } from './sliding-window.ts';

interface RuleState {
  requests: WindowCounter;
  tokens: WindowCounter;
  inFlight: number;
}

/**
 * Counters in this process's memory (the default; SEED-SPEC "Limits" rule 12). JavaScript
 * runs each call to completion, so check-all-then-commit is atomic without locks.
 */
export class MemoryCounterStore implements RateLimitCounterStore {
  private readonly states = new Map<string, RuleState>();

  async admit(rules: readonly RateLimitRule[], options: AdmissionOptions, nowMs: number): Promise<AdmissionResult> {
    return this.admitNow(rules, options, nowMs);
  }

  /** Synchronous admission, for callers that want no promise. */
  admitNow(rules: readonly RateLimitRule[], options: AdmissionOptions, nowMs: number): AdmissionResult {
    const now = Math.floor(nowMs / 1000);
    let breach: Breach | null = null;
    for (const rule of rules) {
      const found = this.check(rule, this.stateOf(rule), options, now, nowMs);
      if (found !== null && (breach === null || found.retryAfterMs > breach.retryAfterMs)) breach = found;
    }
    if (breach !== null) return { admitted: false, breach };
    const counts: RuleCounts[] = [];
    for (const rule of rules) {
      const state = this.stateOf(rule);
      if (rule.periodSeconds === 0) {
        if (options.holdSlot) state.inFlight += 1;
      } else if (rule.maxRequests !== null) {
        state.requests.current += 1;
      }
      counts.push(countsOf(rule, state, now));
    }
    return { admitted: true, counts };
  }

  async release(rules: readonly RateLimitRule[]): Promise<void> {
    for (const rule of rules) {
      const state = this.states.get(rule.counterKey);
      if (rule.periodSeconds === 0 && state !== undefined && state.inFlight > 0) state.inFlight -= 1;
    }
  }

  async refund(rules: readonly RateLimitRule[], nowMs: number): Promise<void> {
    const now = Math.floor(nowMs / 1000);
    for (const rule of rules) {
      const state = this.states.get(rule.counterKey);
      if (state === undefined) continue;
      if (rule.periodSeconds === 0) {
        if (state.inFlight > 0) state.inFlight -= 1;
      } else if (rule.maxRequests !== null && state.requests.start === now - (now % rule.periodSeconds) && state.requests.current > 0) {
        state.requests.current -= 1;
      }
    }
  }

  async addTokens(rules: readonly RateLimitRule[], tokens: number, nowMs: number): Promise<void> {
    const now = Math.floor(nowMs / 1000);
    for (const rule of rules) {
      if (rule.periodSeconds === 0) continue;
      const state = this.stateOf(rule);
      advance(state.tokens, now, rule.periodSeconds);
      state.tokens.current += tokens;
    }
  }

  async hasCapacity(rules: readonly RateLimitRule[], enforceTokens: boolean, nowMs: number): Promise<boolean> {
    const now = Math.floor(nowMs / 1000);
    const options = { holdSlot: true, enforceTokens };
    return rules.every((rule) => this.check(rule, this.stateOf(rule), options, now, nowMs) === null);
  }

  async counts(rules: readonly RateLimitRule[], nowMs: number): Promise<RuleCounts[]> {
    const now = Math.floor(nowMs / 1000);
    return rules.map((rule) => countsOf(rule, this.stateOf(rule), now));
  }

  async reset(rule: RateLimitRule): Promise<void> {
    const state = this.states.get(rule.counterKey);
    if (state === undefined) return;
    state.requests = newWindow();
    state.tokens = newWindow();
  }

  async resetAll(): Promise<void> {
    for (const state of this.states.values()) {
      state.requests = newWindow();
      state.tokens = newWindow();
    }
  }

  async forget(rule: RateLimitRule): Promise<void> {
    this.states.delete(rule.counterKey);
  }

  private stateOf(rule: RateLimitRule): RuleState {
    let state = this.states.get(rule.counterKey);
    if (state === undefined) {
      state = { requests: newWindow(), tokens: newWindow(), inFlight: 0 };
      this.states.set(rule.counterKey, state);
    }
    return state;
  }

  /** Advances the rule's windows and returns its breach, if any. */
  private check(rule: RateLimitRule, state: RuleState, options: AdmissionOptions, now: number, nowMs: number): Breach | null {
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
}

function countsOf(rule: RateLimitRule, state: RuleState, now: number): RuleCounts {
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
