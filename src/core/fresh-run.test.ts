import { describe, expect, it } from 'vitest';
import { FreshRun } from './fresh-run.ts';

/** A task whose runs the test ends one by one; each run records the version it "read" when it began. */
function gatedTask(source: { version: number }) {
  const reads: number[] = [];
  const gates: Array<() => void> = [];
  const task = async (): Promise<void> => {
    reads.push(source.version);
    await new Promise<void>((resolve) => gates.push(resolve));
  };
  const endNext = async (): Promise<void> => {
    await new Promise((resolve) => setImmediate(resolve));
    gates.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { task, reads, endNext };
}

describe('FreshRun', () => {
  it('gives a call made during a run the next run, which reads what was written meanwhile', async () => {
    const source = { version: 1 };
    const { task, reads, endNext } = gatedTask(source);
    const runner = new FreshRun(task);
    const first = runner.run();
    source.version = 2;
    let secondDone = false;
    const second = runner.run().then(() => (secondDone = true));
    await endNext();
    await first;
    expect(secondDone).toBe(false);
    await endNext();
    await second;
    expect(reads).toEqual([1, 2]);
  });

  it('shares one next run between every call made during a run, and runs one at a time', async () => {
    const source = { version: 1 };
    const { task, reads, endNext } = gatedTask(source);
    const runner = new FreshRun(task);
    const first = runner.run();
    const waiting = [runner.run(), runner.run(), runner.run()];
    expect(new Set(waiting).size).toBe(1);
    await endNext();
    await first;
    await endNext();
    await Promise.all(waiting);
    expect(reads).toHaveLength(2);
    runner.run();
    expect(reads).toHaveLength(3);
    await endNext();
  });

  it('starts the next run after a failed one, and passes each run its own failure', async () => {
    let calls = 0;
    const runner = new FreshRun(async () => {
      calls += 1;
      await new Promise((resolve) => setImmediate(resolve));
      if (calls === 1) throw new Error('first failed');
    });
    const first = runner.run();
    const second = runner.run();
    await expect(first).rejects.toThrow('first failed');
    await expect(second).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });

  it('lets a periodic tick join the run in progress or the one queued, and start one when idle', async () => {
    const source = { version: 1 };
    const { task, reads, endNext } = gatedTask(source);
    const runner = new FreshRun(task);
    const first = runner.run();
    expect(runner.runOrJoin()).toBe(first);
    const queued = runner.run();
    expect(runner.runOrJoin()).toBe(queued);
    await endNext();
    await endNext();
    await Promise.all([first, queued]);
    expect(reads).toHaveLength(2);
    const idle = runner.runOrJoin();
    expect(reads).toHaveLength(3);
    await endNext();
    await idle;
  });

  it('never has two runs going at once, even for a call in the continuation of the run that just ended', async () => {
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
