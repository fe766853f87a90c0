import { describe, expect, it } from 'vitest';
import { advance, estimate, estimateAt, newWindow, secondsToWindowEnd, secondsUntilBelow, type WindowCounter } from './sliding-window.ts';

// A window-aligned clock, as in reference/ratelimits.md section 9.
const t0 = 1_000_000_200;

const add = (window: WindowCounter, now: number, amount: number): void => {
  advance(window, now, 60);
  window.current += amount;
};

describe('sliding window', () => {
  it('carries the previous window with a decaying weight (10/min at T0)', () => {
    const window = newWindow();
    add(window, t0, 10);
    expect(estimateAt(window, t0, 60)).toBe(10);
    expect(estimateAt(window, t0 + 60, 60)).toBe(10);
    expect(estimateAt(window, t0 + 61, 60)).toBe(9);
    expect(estimateAt(window, t0 + 119, 60)).toBe(0);
    expect(estimateAt(window, t0 + 180, 60)).toBe(0);
  });

  it('finds the exact Retry-After for requests: 10 at T0, limit 10 -> 61 s', () => {
    const window = newWindow();
    add(window, t0, 10);
    const wait = secondsUntilBelow(window, t0, 60, 10);
    expect(wait).toBe(61);
    expect(estimateAt(window, t0 + wait - 1, 60)).toBeGreaterThanOrEqual(10);
    expect(estimateAt(window, t0 + wait, 60)).toBeLessThan(10);
  });

  it('finds the exact Retry-After for tokens: 30 recorded, limit 10 -> 101 s', () => {
    const window = newWindow();
    add(window, t0, 30);
    expect(secondsUntilBelow(window, t0, 60, 10)).toBe(101);
  });

  it('forgets everything after two idle windows and zeroes a skipped window', () => {
    const window = newWindow();
    add(window, t0, 5);
    advance(window, t0 + 150, 60);
    expect([window.previous, window.current]).toEqual([0, 0]);
    expect(estimate(window, t0 + 150, 60)).toBe(0);
  });

  it('rejects most of a boundary burst (50 at second 59, 50 at second 61)', () => {
    const window = newWindow();
    add(window, t0 + 59, 50);
    // At second 61 of the next minute (1 s in), the previous 50 still weigh floor(50*59/60)=49.
    const admittedInBurst = (() => {
      let admitted = 0;
      for (let index = 0; index < 50; index += 1) {
        advance(window, t0 + 61, 60);
        if (estimate(window, t0 + 61, 60) < 50) {
          window.current += 1;
          admitted += 1;
        }
      }
      return admitted;
    })();
    expect(admittedInBurst).toBe(1);
  });

  it('never rolls back to an earlier window when a clock lags (skew between replicas)', () => {
    const window = newWindow();
    add(window, t0 + 60, 7);
    advance(window, t0 + 59, 60);
    expect([window.start, window.current]).toEqual([t0 + 60, 7]);
    expect(estimate(window, t0 + 59, 60)).toBe(7);
  });

  it('reports seconds to the aligned window end', () => {
    expect(secondsToWindowEnd(t0, 60)).toBe(60);
    expect(secondsToWindowEnd(t0 + 59, 60)).toBe(1);
  });
});
