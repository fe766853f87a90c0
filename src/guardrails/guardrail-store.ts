/**
 * A guardrail managed through the admin API, as stored: its YAML-shaped entry (`{name, type,
 * mode, applies_to, ...settings}`, validated by the schema of guardrails/guardrail-settings.ts before it is
 * stored and again when it is read).
 */
export interface GuardrailRow {
  readonly name: string;
  readonly spec: Readonly<Record<string, unknown>>;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Durable admin-managed guardrails. Implementations: SQLite and PostgreSQL (src/storage/). */
export interface GuardrailStore {
  /** Every stored guardrail, ordered by name (byte order). */
  list(): Promise<GuardrailRow[]>;
  /** Inserts or replaces by name (case-sensitive), keeping `createdAt`. */
  upsert(row: GuardrailRow): Promise<void>;
  /** Removes by name; false when there was none. */
  remove(name: string): Promise<boolean>;
}
