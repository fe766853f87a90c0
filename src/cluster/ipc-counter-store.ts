import type { AdmissionOptions, AdmissionResult, RateLimitCounterStore, RuleCounts, SlotLease } from '../ratelimit/counter-store.ts';
import type { RateLimitRule } from '../ratelimit/rules.ts';
import type { PrimaryLink } from './primary-link.ts';

/**
 * A worker's rate-limit counters: every operation is answered by the primary's one
 * MemoryCounterStore (counter-owner.ts), so the limits hold across workers exactly as in one
 * process. Slots are leased to this worker: released by lease, freed by the primary if the
 * worker dies, never renewed (the primary sees a worker die at once).
 */
export class IpcCounterStore implements RateLimitCounterStore {
  private readonly link: PrimaryLink;

  constructor(link: PrimaryLink) {
    this.link = link;
  }

  async admit(rules: readonly RateLimitRule[], options: AdmissionOptions, nowMs: number): Promise<AdmissionResult> {
    return (await this.link.call('rl.admit', { rules, options, nowMs })) as AdmissionResult;
  }

  async release(rules: readonly RateLimitRule[], lease?: SlotLease): Promise<void> {
    await this.link.call('rl.release', { rules, lease: lease?.id }, true);
  }

  async refund(rules: readonly RateLimitRule[], nowMs: number, lease?: SlotLease): Promise<void> {
    await this.link.call('rl.refund', { rules, lease: lease?.id, nowMs }, true);
  }

  async addTokens(rules: readonly RateLimitRule[], tokens: number, nowMs: number): Promise<void> {
    await this.link.call('rl.addTokens', { rules, tokens, nowMs });
  }

  async hasCapacity(rules: readonly RateLimitRule[], enforceTokens: boolean, nowMs: number): Promise<boolean> {
    return (await this.link.call('rl.hasCapacity', { rules, enforceTokens, nowMs })) === true;
  }

  async counts(rules: readonly RateLimitRule[], nowMs: number): Promise<RuleCounts[]> {
    return (await this.link.call('rl.counts', { rules, nowMs })) as RuleCounts[];
  }

  async reset(rule: RateLimitRule): Promise<void> {
    await this.link.call('rl.reset', rule);
  }

  async resetAll(): Promise<void> {
    await this.link.call('rl.resetAll', null);
  }

  async forget(rule: RateLimitRule): Promise<void> {
    await this.link.call('rl.forget', rule);
  }
}
