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

/** `mcp.max_upstream_sessions_per_server` and `mcp.upstream_session_idle_seconds` (ADR 0033). Here, beside the timings,
 * because the manager is loaded at every start and the session pool loads the MCP SDK. */
export interface UpstreamSessionLimits {
  readonly maxSessions: number;
  readonly idleMs: number;
}

export const defaultSessionLimits: UpstreamSessionLimits = { maxSessions: 100, idleMs: 300_000 };
