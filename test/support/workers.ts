/**
 * How long a write made through one worker may take to show on the other in these suites. They
 * run with RELOAD_INTERVAL_SECONDS=60: what shows sooner came by the primary's nudge (at once in
 * practice), not by the replica re-read, whose interval is the documented bound (docs/scaling.md).
 */
export const nudgeBoundMs = 3_000;
export const slowReloadEnv = { RELOAD_INTERVAL_SECONDS: '60' } as const;

/** Repeats `probe` (each round on new connections, so both workers answer) until `accepted`, within `timeoutMs`. */
export async function onBothWorkers<T>(probe: () => Promise<T>, accepted: (value: T) => boolean, timeoutMs = nudgeBoundMs): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accepted(value)) return value;
    if (Date.now() >= deadline) throw new Error(`not on both workers within ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
