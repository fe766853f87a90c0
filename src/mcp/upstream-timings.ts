export interface UpstreamTimings {
  /** Connect and initialize. */
  connectTimeoutMs: number;
  /** One full catalog listing. */
  listTimeoutMs: number;
  /** Re-list a connected server this often (list_changed notifications re-list at once). */
  refreshIntervalMs: number;
  /** Reconnect backoff: 1 s, doubling up to this. */
  maxBackoffMs: number;
}

export const defaultUpstreamTimings: UpstreamTimings = {
  connectTimeoutMs: 15_000,
  listTimeoutMs: 30_000,
  refreshIntervalMs: 5 * 60_000,
  maxBackoffMs: 60_000,
};
