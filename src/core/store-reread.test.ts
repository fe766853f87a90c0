import { describe, expect, it } from 'vitest';
import { StoreReread } from './store-reread.ts';

describe('StoreReread', () => {
  it('drops a read begun before a local write, and never hands a caller a read begun before its call', async () => {
    let stored = 'old';
    const reads: Array<() => void> = [];
    const applied: string[] = [];
    const reread = new StoreReread<string>({
      read: () => {
        const value = stored;
        return new Promise((resolve) => reads.push(() => resolve(value)));
      },
      apply: (value) => void applied.push(value),
      failed: () => undefined,
    });
    const first = reread.run();
    stored = 'new';
    reread.wrote();
    const second = reread.run();
    reads.shift()?.();
    await first;
    expect(applied).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    reads.shift()?.();
    await second;
    expect(applied).toEqual(['new']);
  });
});
