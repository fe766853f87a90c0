/** One executed request (CONTRACT section 7). Times are epoch milliseconds. */
export interface UsageRecord {
  /** Unique id of the record (a UUID). */
  readonly id: string;
  readonly requestId: string;
  readonly timestamp: number;
  /** Normalised user path as the request had it (case kept). */
  readonly userPath: string;
  readonly apiKeyId: string | null;
  /** The route, e.g. `/v1/chat/completions`. */
  readonly endpoint: string;
  /** The provider instance that executed the request. */
  readonly provider: string;
  /** The model id the provider executed (bare, as sent upstream). */
  readonly model: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  /** The usage object as the provider reported it (SEED-SPEC usage object), or null. */
  readonly usage: Record<string, unknown> | null;
  /** Cost in USD; null when the model's price is unknown. */
  readonly costUsd: number | null;
  readonly cacheHit: boolean;
  readonly stream: boolean;
  /** HTTP status the client received (499 when the client went away). */
  readonly status: number;
  readonly latencyMs: number;
}

export type UsageGroupBy = 'user_path' | 'provider' | 'model' | 'day' | 'api_key';

/** Time buckets of a usage series (`GET /admin/usage?bucket=`), aligned to UTC hours or days. */
export type UsageBucket = 'hour' | 'day';

export const usageBucketMilliseconds: Readonly<Record<UsageBucket, number>> = { hour: 3_600_000, day: 86_400_000 };

export interface UsageQuery {
  /** Inclusive lower bound, epoch ms. */
  readonly from: number;
  /** Exclusive upper bound, epoch ms. */
  readonly to: number;
  /** Restricts to this user path and its descendants (case-insensitive); `/` is everything. */
  readonly userPath?: string;
  readonly provider?: string;
  readonly model?: string;
}

export interface UsageTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Sum of known costs; 0 when none is known. */
  costUsd: number;
  /** Records without a known cost (no price for their model): the API then reports a null cost. */
  unpricedRequests: number;
}

export interface UsageGroup extends UsageTotals {
  /** The group's key: a user path, provider, model, API key id (`''` for none), or a UTC day `YYYY-MM-DD`. */
  key: string;
  /** With a bucket: the start of the group's time bucket, epoch ms. */
  bucket?: number;
}

/** Durable usage records. Implementations: SQLite and PostgreSQL (src/storage/). */
export interface UsageStore {
  /** Writes records in one transaction; all or nothing. */
  insertMany(records: readonly UsageRecord[]): Promise<void>;
  /**
   * Totals grouped by one dimension, ordered by key; with a bucket, grouped by time bucket and
   * dimension (a series per key, for charts), ordered by bucket then key.
   */
  summarize(query: UsageQuery, groupBy: UsageGroupBy, bucket?: UsageBucket): Promise<UsageGroup[]>;
  /** Totals over the whole query. */
  totals(query: UsageQuery): Promise<UsageTotals>;
  /**
   * Records of one request id, oldest first. For tests and diagnostics: no gateway path calls it,
   * and since migration 15 no index serves it (a table scan; ADR 23).
   */
  findByRequestId(requestId: string): Promise<UsageRecord[]>;
}
