export type RateLimitScope = 'user_path' | 'provider' | 'model';

/**
 * A manual rate-limit rule as stored. Identity: (scope, lower-cased subject, periodSeconds);
 * periodSeconds 0 is the concurrency cap.
 */
export interface RateLimitRuleRow {
  readonly scope: RateLimitScope;
  /** User path (case kept), provider instance name or model id (both lower-cased). */
  readonly subject: string;
  readonly periodSeconds: number;
  readonly maxRequests: number | null;
  readonly maxTokens: number | null;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Durable manual rate-limit rules. Implementations: SQLite and PostgreSQL (src/storage/). */
export interface RateLimitRuleStore {
  /** Every manual rule, ordered by scope, lower-cased subject, period. */
  list(): Promise<RateLimitRuleRow[]>;
  /** Inserts or replaces the rule with the same identity (keeps its `createdAt`). */
  upsert(row: RateLimitRuleRow): Promise<void>;
  /** Removes the rule; false when there was none. */
  remove(scope: RateLimitScope, subject: string, periodSeconds: number): Promise<boolean>;
}
