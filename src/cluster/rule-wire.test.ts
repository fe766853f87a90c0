import { describe, expect, it } from 'vitest';

import { MemoryCounterStore } from '../ratelimit/memory-counter-store.ts';
import { ruleId, validateRule, type RateLimitRule } from '../ratelimit/rules.ts';
import { fromWireRules, toWire, toWireRules } from './rule-wire.ts';

function rule(subject: string, periodSeconds: number, maxRequests: number | null, maxTokens: number | null): RateLimitRule {
  const draft = validateRule({ scope: 'provider', subject, periodSeconds, maxRequests, maxTokens });
  const id = ruleId(draft.scope, draft.subject, draft.periodSeconds);
  return { ...draft, id, counterKey: `${id}#7`, origin: 'manual', createdAt: 1, updatedAt: 2 };
}

const options = { holdSlot: true, enforceTokens: true };
const now = Date.UTC(2026, 0, 1, 12);

describe('rule wire form', () => {
  it('carries the counter key, period and caps, and is made once per rule object', () => {
    const window = rule('openai', 60, 3, 100);
    expect(toWire(window)).toEqual(['provider|openai|60#7', 60, 3, 100]);
    expect(toWire(window)).toBe(toWire(window));
    const [back] = fromWireRules(JSON.parse(JSON.stringify(toWireRules([window]))) as ReturnType<typeof toWireRules>);
    expect(back).toMatchObject({ counterKey: window.counterKey, periodSeconds: 60, maxRequests: 3, maxTokens: 100 });
  });

  it('decides exactly as the whole rules do: same admissions, counts and Retry-After', async () => {
    const rules = [rule('openai', 60, 3, 50), rule('openai', 0, 2, null)];
    const whole = new MemoryCounterStore();
    const wired = new MemoryCounterStore();
    const stand = fromWireRules(JSON.parse(JSON.stringify(toWireRules(rules))) as ReturnType<typeof toWireRules>);
    for (let index = 0; index < 4; index += 1) {
      const at = now + index * 250;
      const expected = await whole.admit(rules, options, at);
      const actual = await wired.admit(stand, options, at);
      expect(actual.admitted).toBe(expected.admitted);
      if (expected.admitted && actual.admitted) expect(actual.counts).toEqual(expected.counts);
      if (!expected.admitted && !actual.admitted) {
        expect([actual.breach.kind, actual.breach.retryAfterMs, actual.breach.rule.counterKey]).toEqual([
          expected.breach.kind,
          expected.breach.retryAfterMs,
          expected.breach.rule.counterKey,
        ]);
      }
    }
    await whole.addTokens(rules, 60, now + 1_000);
    await wired.addTokens(stand, 60, now + 1_000);
    await whole.release(rules);
    await wired.release(stand);
    expect(await wired.counts(stand, now + 1_000)).toEqual(await whole.counts(rules, now + 1_000));
  });
});
