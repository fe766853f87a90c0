export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit. */
  failureThreshold: number;
  /** How long an open circuit refuses calls before one probe is let through. */
  openMs: number;
  now?: () => number;
}

interface Circuit {
  failures: number;
  openedAt: number | null;
  probing: boolean;
}

/**
 * One circuit per provider instance: after `failureThreshold` consecutive failures (5xx,
 * timeouts, connection errors) calls are refused for `openMs`; then a single probe decides
 * whether it closes again.
 */
export class CircuitBreakers {
  private readonly options: CircuitBreakerOptions;
  private readonly circuits = new Map<string, Circuit>();
  private readonly now: () => number;

  constructor(options: CircuitBreakerOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  state(instance: string): CircuitState {
    const circuit = this.circuits.get(instance);
    if (circuit?.openedAt === undefined || circuit.openedAt === null) return 'closed';
    return this.now() - circuit.openedAt >= this.options.openMs ? 'half_open' : 'open';
  }

  /** Whether a call may go to the instance now, without claiming the half-open probe. */
  isAvailable(instance: string): boolean {
    const state = this.state(instance);
    return state === 'closed' || (state === 'half_open' && !(this.circuits.get(instance)?.probing ?? false));
  }

  /** Claims the right to call the instance (the single probe when half-open). */
  tryAcquire(instance: string): boolean {
    const state = this.state(instance);
    if (state === 'closed') return true;
    const circuit = this.circuits.get(instance);
    if (state === 'open' || circuit === undefined || circuit.probing) return false;
    circuit.probing = true;
    return true;
  }

  recordSuccess(instance: string): void {
    this.circuits.delete(instance);
  }

  recordFailure(instance: string): void {
    const circuit = this.circuits.get(instance) ?? { failures: 0, openedAt: null, probing: false };
    circuit.failures += 1;
    if (circuit.probing || circuit.failures >= this.options.failureThreshold) circuit.openedAt = this.now();
    circuit.probing = false;
    this.circuits.set(instance, circuit);
  }

  /** Hot reload: an instance removed or given new settings starts over with a closed circuit. */
  forget(instance: string): void {
    this.circuits.delete(instance);
  }

  /** Gives back a claimed probe that was never used (the attempt was skipped). */
  releaseProbe(instance: string): void {
    const circuit = this.circuits.get(instance);
    if (circuit !== undefined) circuit.probing = false;
  }
}
