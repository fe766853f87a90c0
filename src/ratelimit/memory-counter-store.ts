import type { AdmissionOptions, AdmissionResult, RateLimitCounterStore, RuleCounts } from './counter-store.ts';
import { breachOf, countsOf, longestBreach, newRuleState, type RuleState } from './rule-check.ts';
import type { RateLimitRule } from './rules.ts';
import { advance, newWindow } from './sliding-window.ts';

/**
 * Counters in this process's memory (the default; SEED-SPEC "Limits" rule 12). JavaScript
 * runs each call to completion, so check-all-then-commit is atomic without locks. Slots are
 * counted, not leased: a process that dies takes its counters with it, so nothing can leak,
 * and the rate limiter releases each admission exactly once, so the optional lease arguments
 * of the port are not needed here.
 */
export class MemoryCounterStore implements RateLimitCounterStore {
  private readonly states = new Map<string, RuleState>();

  async admit(rules: readonly RateLimitRule[], options: AdmissionOptions, nowMs: number): Promise<AdmissionResult> {
    return this.admitNow(rules, options, nowMs);
  }

  /** Synchronous admission, for callers that want no promise. */
  admitNow(rules: readonly RateLimitRule[], options: AdmissionOptions, nowMs: number): AdmissionResult {
    const now = Math.floor(nowMs / 1000);
    const states = rules.map((rule) => this.stateOf(rule));
    const breach = longestBreach(rules, states, options, nowMs);
    if (breach !== null) return { admitted: false, breach };
    const counts: RuleCounts[] = [];
    rules.forEach((rule, index) => {
      const state = states[index] as RuleState;
      if (rule.periodSeconds === 0) {
        if (options.holdSlot) state.inFlight += 1;
      } else if (rule.maxRequests !== null) {
        state.requests.current += 1;
      }
      counts.push(countsOf(rule, state, now));
    });
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
    return rules.every((rule) => breachOf(rule, this.stateOf(rule), options, now, nowMs) === null);
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
      state = newRuleState();
      this.states.set(rule.counterKey, state);
    }
    return state;
  }
}
