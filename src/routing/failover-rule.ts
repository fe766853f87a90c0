/**
 * What moves a direct request on to its next fallback: an upstream 5xx, an upstream 429, a
 * timeout, a connection failure, or a target whose provider or model rule is saturated.
 */
export const failoverTriggers = ['5xx', '429', 'timeout', 'connection', 'saturated'] as const;

export type FailoverTrigger = (typeof failoverTriggers)[number];

/**
 * Whether a target with an open circuit is passed over: its circuit opened on 5xx answers,
 * timeouts or connection failures, so any of those in `on` moves on from it.
 */
export const circuitOpenMovesOn = (on: readonly FailoverTrigger[]): boolean =>
  on.includes('5xx') || on.includes('timeout') || on.includes('connection');

/** A failover rule for a concrete selector (issue 15), as declared. */
export interface FailoverRuleDefinition {
  /** `<instance>/<model>` (one instance's model) or `<model>` (that model on any instance). */
  readonly model: string;
  /** Selectors tried in order after the model, each `<instance>/<model>` or `<model>`. */
  readonly fallbacks: readonly string[];
  /** The failures that move on; all five when not declared. */
  readonly on: readonly FailoverTrigger[];
}

/** A stored (admin-managed) failover rule. */
export interface FailoverRuleRow extends FailoverRuleDefinition {
  /** Epoch ms. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Durable admin-managed failover rules. Implementations: SQLite and PostgreSQL (src/storage/). */
export interface FailoverRuleStore {
  /** Every stored rule, ordered by model (byte order). */
  list(): Promise<FailoverRuleRow[]>;
  /** Inserts or replaces by model (case-sensitive), keeping `createdAt`. */
  upsert(row: FailoverRuleRow): Promise<void>;
  /** Removes by model; false when there was none. */
  remove(model: string): Promise<boolean>;
}
