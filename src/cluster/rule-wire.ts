import type { RateLimitRule } from '../ratelimit/rules.ts';

// Rate-limit rules cross the IPC channel as the four fields the counters read, in an array:
// about a third of the JSON of the whole rule, serialised by the worker and parsed by the
// primary for every admission, release and token update.

export type WireRule = readonly [counterKey: string, periodSeconds: number, maxRequests: number | null, maxTokens: number | null];

/** Rules are immutable (an edit makes a new object): each is turned into its wire form once. */
const wired = new WeakMap<RateLimitRule, WireRule>();

export function toWire(rule: RateLimitRule): WireRule {
  let wire = wired.get(rule);
  if (wire === undefined) {
    wire = [rule.counterKey, rule.periodSeconds, rule.maxRequests, rule.maxTokens];
    wired.set(rule, wire);
  }
  return wire;
}

export function toWireRules(rules: readonly RateLimitRule[]): WireRule[] {
  return rules.map(toWire);
}

/**
 * The primary's stand-in for a rule: the counters read only `counterKey`, the period and the
 * caps, which are real; the rest is filler. A breach names it by `counterKey`, and the worker
 * puts its own rule back in (ipc-counter-store.ts).
 */
export function fromWire([counterKey, periodSeconds, maxRequests, maxTokens]: WireRule): RateLimitRule {
  return {
    id: counterKey,
    counterKey,
    scope: 'user_path',
    subject: '',
    periodSeconds,
    maxRequests,
    maxTokens,
    origin: 'config',
    createdAt: 0,
    updatedAt: 0,
  };
}

export function fromWireRules(rules: readonly WireRule[]): RateLimitRule[] {
  return rules.map(fromWire);
}
