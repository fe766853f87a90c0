import { describe, expect, it } from 'vitest';
import { FreshRun } from './fresh-run.ts';

describe('FreshRun, a call in the continuation of the run that just ended', () => {
  it('never has two runs going at once', async () => {
    let active = 0;
    let most = 0;
    const gates: Array<() => void> = [];
    const runner = new FreshRun(async () => {
      active += 1;
      most = Math.max(most, active);
      await new Promise<void>((resolve) => gates.push(resolve));
      active -= 1;
    });
    const first = runner.run();
    const queued = runner.run(); // made during the first run: waits for the next one
    const after = first.then(() => runner.run()); // a caller that awaited the first run asks again
    gates.shift()?.();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    while (gates.length > 0) {
      gates.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all([queued, after]);
    expect(most).toBe(1);
  });
});
