import type { AdmissionOptions, AdmissionResult, RateLimitCounterStore, RuleCounts, SlotLease } from '../ratelimit/counter-store.ts';
import type { RateLimitRule } from '../ratelimit/rules.ts';
import type { PrimaryLink } from './primary-link.ts';
import { toWire, toWireRules } from './rule-wire.ts';

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
    const result = (await this.link.call('rl.admit', { rules: toWireRules(rules), options, nowMs })) as AdmissionResult;
    if (result.admitted) return result;
    // The primary's breach names a stand-in of the rule (rule-wire.ts): put this worker's own back.
    const rule = rules.find((candidate) => candidate.counterKey === result.breach.rule.counterKey) ?? result.breach.rule;
    return { admitted: false, breach: { ...result.breach, rule } };
  }

  async release(rules: readonly RateLimitRule[], lease?: SlotLease): Promise<void> {
    await this.link.post('rl.release', { rules: toWireRules(rules), lease: lease?.id }, true);
  }

  async refund(rules: readonly RateLimitRule[], nowMs: number, lease?: SlotLease): Promise<void> {
    await this.link.post('rl.refund', { rules: toWireRules(rules), lease: lease?.id, nowMs }, true);
  }

  /**
   * Sent at once, like releases: a JSON answer's tokens are recorded before it is sent, so they
   * reach the primary before the client can ask again through another worker.
   */
  async addTokens(rules: readonly RateLimitRule[], tokens: number, nowMs: number): Promise<void> {
    await this.link.post('rl.addTokens', { rules: toWireRules(rules), tokens, nowMs }, true);
  }

  async hasCapacity(rules: readonly RateLimitRule[], enforceTokens: boolean, nowMs: number): Promise<boolean> {
    return (await this.link.call('rl.hasCapacity', { rules: toWireRules(rules), enforceTokens, nowMs })) === true;
  }

  async counts(rules: readonly RateLimitRule[], nowMs: number): Promise<RuleCounts[]> {
    return (await this.link.call('rl.counts', { rules: toWireRules(rules), nowMs })) as RuleCounts[];
  }

  async reset(rule: RateLimitRule): Promise<void> {
    await this.link.call('rl.reset', toWire(rule));
  }

  async resetAll(): Promise<void> {
    await this.link.call('rl.resetAll', null);
  }

  async forget(rule: RateLimitRule): Promise<void> {
    await this.link.call('rl.forget', toWire(rule));
  }
}
