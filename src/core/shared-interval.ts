/** Callbacks that share one timer, by period. */
interface SharedTimer {
  readonly timer: NodeJS.Timeout;
  readonly callbacks: Set<() => void>;
}

const timers = new Map<number, SharedTimer>();

/**
 * `setInterval` (unref'd) whose callbacks of the same period run from one timer, one after the
 * other in the order they were added. Two timers of the same period started a moment apart fire
 * in separate event-loop turns for good; the usage and request log recorders tick from here so
 * that their batches reach the SQLite writer thread in the same turn, and it writes both in one
 * message and one transaction (ADR 23). Callbacks must not throw. Returns the function that
 * removes the callback (the timer stops with its last one).
 */
export function everyInterval(periodMs: number, callback: () => void): () => void {
  let shared = timers.get(periodMs);
  if (shared === undefined) {
    const callbacks = new Set<() => void>();
    const timer = setInterval(() => {
      for (const run of callbacks) run();
    }, periodMs);
    timer.unref();
    shared = { timer, callbacks };
    timers.set(periodMs, shared);
  }
  const entry = shared;
  const run = (): void => callback(); // one entry per call, even for the same function
  entry.callbacks.add(run);
  return () => {
    if (!entry.callbacks.delete(run) || entry.callbacks.size > 0) return;
    clearInterval(entry.timer);
    if (timers.get(periodMs) === entry) timers.delete(periodMs);
  };
}
