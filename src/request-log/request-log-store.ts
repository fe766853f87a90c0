/** One upstream attempt of a request, in the order they were made. */
export interface RequestLogAttempt {
  readonly provider: string;
  readonly model: string;
  /** The attempt's HTTP status (429 for a saturated target passed over); null when none was received. */
  readonly status: number | null;
  readonly latencyMs: number | null;
  /** The error code of a failed or skipped attempt; null for the one that served. */
  readonly errorCode: string | null;
}

/** The rate-limit rule that refused a request. */
export interface RateLimitRuleRef {
  readonly scope: string;
  readonly subject: string;
  /** `minute`, `hour`, `day`, `concurrent` or `<n>s`. */
  readonly period: string;
  /** `requests`, `tokens` or `concurrent`. */
  readonly kind: string;
}

/** A guardrail decision on a request (in monitor mode: what it would have done). */
export interface RequestLogGuardrail {
  readonly name: string;
  readonly type: string;
  readonly action: 'redact' | 'block';
  readonly mode: string;
  /** `input` or `output`. */
  readonly stage: string;
}

/** One request that reached a model endpoint, whatever its outcome. Times are epoch ms. */
export interface RequestLogEntry {
  /** Unique key of the row (a time-ordered UUID); request ids may repeat (inbound X-Request-ID). */
  readonly rowId: string;
  /** The request id. */
  readonly id: string;
  /** When the request arrived. */
  readonly time: number;
  readonly userPath: string;
  readonly apiKeyId: string | null;
  readonly endpoint: string;
  readonly modelRequested: string | null;
  readonly virtualModel: string | null;
  readonly attempts: readonly RequestLogAttempt[];
  /** The instance and model that executed (or last tried) the request. */
  readonly provider: string | null;
  readonly model: string | null;
  /** The HTTP status the client got; 499 when it went away first. */
  readonly status: number;
  readonly errorType: string | null;
  readonly errorCode: string | null;
  readonly rateLimit: RateLimitRuleRef | null;
  readonly latencyMs: number;
  /** Streams: milliseconds to the first byte of the body. */
  readonly ttftMs: number | null;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  /** The metered cost (the usage records' sum); null when no price was known. */
  readonly costUsd: number | null;
  readonly cacheHit: boolean;
  readonly stream: boolean;
  readonly userAgent: string | null;
  /** Kept per REQUEST_LOG_BODIES, capped and redacted. */
  readonly requestBody: string | null;
  readonly responseBody: string | null;
  /** The guardrail decisions, in the order they were made; null when none was made. */
  readonly guardrails: readonly RequestLogGuardrail[] | null;
}

/** `status` filter: one status, or a class. */
export type StatusFilter = { readonly exact: number } | { readonly statusClass: number };

/** Position after which a page continues (newest first). */
export interface RequestLogCursor {
  readonly time: number;
  readonly rowId: string;
}

export interface RequestLogQuery {
  /** Inclusive lower bound. */
  readonly from?: number;
  /** Exclusive upper bound. */
  readonly to?: number;
  /** This user path and its descendants, case-insensitive. */
  readonly userPath?: string;
  readonly apiKeyId?: string;
  readonly provider?: string;
  readonly model?: string;
  readonly status?: StatusFilter;
  readonly errorCode?: string;
  readonly endpoint?: string;
  readonly cacheHit?: boolean;
  /** The start of the request id (case-sensitive). */
  readonly text?: string;
  readonly limit: number;
  readonly after?: RequestLogCursor;
}

export interface RequestLogPage {
  /** Newest first, without bodies. */
  readonly entries: RequestLogEntry[];
  /** Where the next page starts; null on the last page. */
  readonly next: RequestLogCursor | null;
}

/** What `stats` groups by. */
export type RequestStatsGroupBy = 'provider' | 'model';

/** Time buckets of a stats series, aligned to UTC hours or days. */
export type RequestStatsBucket = 'hour' | 'day';

export interface RequestStatsQuery {
  /** Inclusive lower bound. */
  readonly from: number;
  /** Exclusive upper bound. */
  readonly to: number;
  readonly groupBy: RequestStatsGroupBy;
  readonly bucket?: RequestStatsBucket;
  /** At most this many entries are read: the newest of the range. */
  readonly maxRows: number;
}

/** Count, errors and latency percentiles (nearest rank) of one group (and bucket). */
export interface RequestStatsGroup {
  /** The provider or model; null for requests refused before one was chosen. */
  readonly key: string | null;
  /** With a bucket: the bucket's start. */
  readonly bucket?: number;
  readonly requests: number;
  /** Entries with a status of 400 or more. */
  readonly errors: number;
  /** Entries with a status of 500 or more. */
  readonly serverErrors: number;
  readonly p50LatencyMs: number;
  readonly p95LatencyMs: number;
}

export interface RequestStats {
  readonly groups: RequestStatsGroup[];
  /** Entries read (at most `maxRows`). */
  readonly rows: number;
  /** The oldest entry read; null when none. Later than `from` when the range held more than `maxRows`. */
  readonly oldest: number | null;
}

/** One API key's requests in a window. */
export interface ApiKeyActivity {
  readonly apiKeyId: string;
  readonly requests: number;
  /** The newest entry of the window. */
  readonly lastUsedAt: number;
  /** Sum of the entries' costs; null when an entry with tokens has no cost (an unpriced model). */
  readonly costUsd: number | null;
}

/** Durable request log. Implementations: SQLite and PostgreSQL (src/storage/sql/). */
export interface RequestLogStore {
  /** Writes entries in one transaction; all or nothing. */
  insertMany(entries: readonly RequestLogEntry[]): Promise<void>;
  /** One page, newest first (time, then row id, descending). */
  list(query: RequestLogQuery): Promise<RequestLogPage>;
  /** The newest entry with this request id, bodies included; null when none. */
  find(requestId: string): Promise<RequestLogEntry | null>;
  /** Per provider or model (and time bucket): count, error counts, p50/p95 latency; bounded by `maxRows`. */
  stats(query: RequestStatsQuery): Promise<RequestStats>;
  /** Per API key, from `from` on, in one grouped query: requests, last use and cost. */
  keyActivity(from: number): Promise<ApiKeyActivity[]>;
  /** Deletes at most `limit` entries older than `before` (oldest first); returns how many. */
  deleteOlderThan(before: number, limit: number): Promise<number>;
}
