import { describe, expect, it } from 'vitest';

import { validateRule, ruleId, type RateLimitRule } from '../ratelimit/rules.ts';
import { CounterOwner } from './counter-owner.ts';
import { BudgetOwner } from './budget-owner.ts';

function rule(subject: string, periodSeconds: number, maxRequests: number): RateLimitRule {
  const draft = validateRule({ scope: 'user_path', subject, periodSeconds, maxRequests, maxTokens: null });
  const id = ruleId(draft.scope, draft.subject, draft.periodSeconds);
  return { ...draft, id, counterKey: `${id}#config`, origin: 'config', createdAt: 0, updatedAt: 0 };
}

const options = { holdSlot: true, enforceTokens: false };
const now = Date.UTC(2026, 0, 1, 12);

describe('CounterOwner', () => {
  it('leases slots per worker and frees exactly a dead worker’s slots', async () => {
    const owner = new CounterOwner();
    const slots = rule('/cc', 0, 2);
    const first = owner.admit(1, { rules: [slots], options, nowMs: now }) as { admitted: boolean; lease?: { id: string } };
    const second = owner.admit(2, { rules: [slots], options, nowMs: now }) as { admitted: boolean; lease?: { id: string } };
    expect([first.admitted, second.admitted]).toEqual([true, true]);
    expect((owner.admit(2, { rules: [slots], options, nowMs: now }) as { admitted: boolean }).admitted).toBe(false);
    expect(owner.workerGone(1)).toBe(1);
    expect((owner.admit(2, { rules: [slots], options, nowMs: now }) as { admitted: boolean }).admitted).toBe(true);
    // A lease released twice (or after its worker died) gives nothing back twice.
    owner.release({ rules: [slots], lease: second.lease?.id });
    owner.release({ rules: [slots], lease: second.lease?.id });
    owner.release({ rules: [slots], lease: first.lease?.id });
    expect((owner.admit(2, { rules: [slots], options, nowMs: now }) as { admitted: boolean }).admitted).toBe(true);
    expect((owner.admit(2, { rules: [slots], options, nowMs: now }) as { admitted: boolean }).admitted).toBe(false);
  });

  it('releases a split admission in parts, each slot once', () => {
    const owner = new CounterOwner();
    const path = rule('/a', 0, 1);
    const other = rule('/b', 0, 1);
    const admitted = owner.admit(1, { rules: [path, other], options, nowMs: now }) as { lease?: { id: string } };
    owner.release({ rules: [path], lease: admitted.lease?.id });
    expect((owner.admit(1, { rules: [path], options, nowMs: now }) as { admitted: boolean }).admitted).toBe(true);
    expect((owner.admit(1, { rules: [other], options, nowMs: now }) as { admitted: boolean }).admitted).toBe(false);
    // The first lease still holds /b; the second holds /a.
    expect(owner.workerGone(1)).toBe(2);
  });
});

describe('BudgetOwner', () => {
  it('holds across workers, never below the asking worker’s floor, and drops a dead worker’s holds', () => {
    const owner = new BudgetOwner();
    const ledger = { key: '/p|86400:0', amount: 1, floor: 0, end: now + 1000 };
    expect(owner.admit(1, { ledgers: [ledger], cost: 0.6, member: '1:1', now })).toEqual({ held: true });
    expect(owner.admit(2, { ledgers: [ledger], cost: 0.6, member: '2:1', now })).toEqual({ held: true });
    expect(owner.admit(2, { ledgers: [ledger], cost: 0.1, member: '2:2', now })).toEqual({ blockedBy: 0, spent: 0 });
    owner.workerGone(1);
    owner.workerGone(2);
    expect(owner.admit(2, { ledgers: [{ ...ledger, floor: 1 }], cost: 0.1, member: '2:3', now })).toEqual({ blockedBy: 0, spent: 1 });
  });
});
