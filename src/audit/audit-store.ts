/** One change made through the admin API. */
export interface AuditEntry {
  /** Time-ordered (UUIDv7): newer entries sort after older ones. */
  readonly id: string;
  /** Epoch ms. */
  readonly time: number;
  /** `master`, a managed key's id, a JWT subject (`jwt:<sub>`), or `open` without credentials. */
  readonly actor: string;
  /** For example `create`, `update`, `rotate`, `deactivate`, `upsert`, `delete`, `reset`. */
  readonly action: string;
  /** The collection (`api-keys`, `budgets`, ...), with `/<id>` when the change names one item. */
  readonly resource: string;
  /** The changed items before and after (secrets redacted); null when there was none. */
  readonly before: unknown;
  readonly after: unknown;
}

export interface AuditQuery {
  /** Epoch ms, inclusive. */
  readonly from?: number | undefined;
  /** Epoch ms, exclusive. */
  readonly to?: number | undefined;
  readonly actor?: string | undefined;
  readonly action?: string | undefined;
  /** Matches the resource itself and everything under it (`api-keys` matches `api-keys/<id>`). */
  readonly resource?: string | undefined;
  /** Entries older than this id (the previous page's last). */
  readonly before?: string | undefined;
  readonly limit: number;
}

/** Durable admin audit trail. Implementations: SQLite and PostgreSQL (src/storage/). */
export interface AuditStore {
  insert(entry: AuditEntry): Promise<void>;
  /** Newest first. */
  list(query: AuditQuery): Promise<AuditEntry[]>;
}
