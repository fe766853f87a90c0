import type { CircuitBreakers } from '../routing/circuit-breaker.ts';

/**
 * The right to call one provider instance, claimed from its circuit breaker (the single probe
 * when the circuit is half-open). Held by one attempt, then given back unused (`release`) or
 * told how the call went (`succeeded`, `failed`); a retry claims it again (`reacquire`).
 */
export class CircuitProbe {
  private readonly breakers: CircuitBreakers;
  readonly instance: string;

  private constructor(breakers: CircuitBreakers, instance: string) {
    this.breakers = breakers;
    this.instance = instance;
  }

  /** The probe, or null while the instance's circuit is open (or its one probe is out). */
  static acquire(breakers: CircuitBreakers, instance: string): CircuitProbe | null {
    return breakers.tryAcquire(instance) ? new CircuitProbe(breakers, instance) : null;
  }

  /** Claims the right again for one more try on the same instance. */
  reacquire(): boolean {
    return this.breakers.tryAcquire(this.instance);
  }

  /** The attempt never used it (skipped, refused, the client left, the gateway's own error). */
  release(): void {
    this.breakers.releaseProbe(this.instance);
  }

  /** The instance answered (a 2xx, or a 4xx/429 that says nothing against its health). */
  succeeded(): void {
    this.breakers.recordSuccess(this.instance);
  }

  /** The instance failed (5xx, timeout, connection error). */
  failed(): void {
    this.breakers.recordFailure(this.instance);
  }
}
