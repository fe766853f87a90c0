import { describe, expect, it } from 'vitest';

import { validateRule, ruleId, type RateLimitRule } from '../ratelimit/rules.ts';
import type { AdmissionResult } from '../ratelimit/counter-store.ts';
import { CounterOwner } from './counter-owner.ts';
import { toWireRules } from './rule-wire.ts';
import type { CallHandler, WorkerHub } from './worker-hub.ts';
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

describe('CounterOwner over the hub', () => {
  /** The handlers `serve` registers, called as the hub calls them. */
  function served(owner: CounterOwner): (op: string, workerId: number, args: unknown) => unknown {
    const handlers = new Map<string, CallHandler>();
    owner.serve({ handle: (op: string, handler: CallHandler) => handlers.set(op, handler) } as unknown as WorkerHub);
    return (op, workerId, args) => (handlers.get(op) as CallHandler)(workerId, args);
  }

  it('checks a refused admission again after this turn: a release read just after it in the same turn frees the slot', async () => {
    const call = served(new CounterOwner());
    const wired = toWireRules([rule('/one', 0, 1)]);
    const held = (await call('rl.admit', 1, { rules: wired, options, nowMs: now })) as AdmissionResult;
    expect(held).toMatchObject({ admitted: true, lease: { id: '1:1' } });
    // Worker 2's admission is read first; worker 1's release, sent before it, right after.
    const next = call('rl.admit', 2, { rules: wired, options, nowMs: now });
    call('rl.release', 1, { rules: wired, lease: '1:1' });
    expect(await next).toMatchObject({ admitted: true, lease: { id: '2:2' } });
    // Still a limit of one: a third is refused, after its second check too.
    expect(await call('rl.admit', 1, { rules: wired, options, nowMs: now })).toMatchObject({ admitted: false });
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
