/**
 * The epoch-aligned two-bucket sliding estimate (reference/ratelimits.md section 2.1), in
 * whole seconds. Windows start at multiples of the period since the Unix epoch, so every
 * rule and every replica with the same period share boundaries.
 */
export interface WindowCounter {
  /** Start of the current window in epoch seconds; -1 before first use. */
  start: number;
  current: number;
  previous: number;
}

export const newWindow = (): WindowCounter => ({ start: -1, current: 0, previous: 0 });

/**
 * Rolls the counter forward to the window containing `now` (epoch seconds). Never backwards:
 * a clock that lags the one that last advanced the counter (another replica's, or this one
 * after an NTP step) keeps the newer window instead of zeroing it; the estimate then counts
 * the previous window at full weight, erring on the strict side.
 */
export function advance(window: WindowCounter, now: number, period: number): void {
  const start = now - (now % period);
  if (start <= window.start) return;
  if (window.start >= 0 && start - window.start === period) {
    window.previous = window.current;
  } else {
    window.previous = 0;
  }
  window.current = 0;
  window.start = start;
}

/** floor(previous × remaining share of the window) + current; the counter must be advanced. */
export function estimate(window: WindowCounter, now: number, period: number): number {
  const elapsed = Math.min(Math.max(now - window.start, 0), period);
  return Math.floor((window.previous * (period - elapsed)) / period) + window.current;
}

/** The estimate at `now` without changing the counter. */
export function estimateAt(window: WindowCounter, now: number, period: number): number {
  const copy = { ...window };
  advance(copy, now, period);
  return estimate(copy, now, period);
}

/**
 * The smallest whole number of seconds t >= 1 after which the estimate drops below `max`
 * if nothing else arrives (binary search; the estimate never rises without new traffic).
 * This can be later than the next window boundary.
 */
export function secondsUntilBelow(window: WindowCounter, now: number, period: number, max: number): number {
  let low = 1;
  let high = 2 * period;
  if (estimateAt(window, now + high, period) >= max) return high;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (estimateAt(window, now + middle, period) < max) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Seconds until the current aligned window ends (at least 1). */
export function secondsToWindowEnd(now: number, period: number): number {
  return Math.max(1, period - (now % period));
}
