import { describe, expect, it } from 'vitest';
import { everyInterval } from './shared-interval.ts';

const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));

describe('everyInterval', () => {
  it('runs the callbacks of one period in the same turn of the event loop, in order, until each is removed', async () => {
    const calls: string[] = [];
    const stopFirst = everyInterval(20, () => {
      calls.push('first');
      setImmediate(() => calls.push('turn ended'));
    });
    await sleep(7); // a timer of its own would fire 7 ms (or more) after the first one
    const stopSecond = everyInterval(20, () => calls.push('second'));
    while (!calls.includes('second')) await sleep(5);
    await sleep(50);
    stopFirst();
    const together = calls.slice(calls.indexOf('second') - 1);
    expect(together.length).toBeGreaterThanOrEqual(3);
    // Each tick: first, second, then the turn ends; never a turn ending between them.
    together.forEach((call, index) => expect(call).toBe(['first', 'second', 'turn ended'][index % 3]));
    const seen = calls.length;
    await sleep(60);
    expect(calls.slice(seen).filter((call) => call !== 'second' && call !== 'turn ended')).toEqual([]);
    expect(calls.slice(seen)).toContain('second');
    stopSecond();
  });
});
