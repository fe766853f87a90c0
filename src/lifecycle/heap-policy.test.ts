import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { maxSemiSpaceMb } from './heap-policy.ts';

const run = promisify(execFile);

// In a child process: the policy changes V8 flags for the whole process it runs in.
const script = `
import { setImmediate as turn } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { heapPolicyAfterStart } from ${JSON.stringify(new URL('./heap-policy.ts', import.meta.url).href)};
heapPolicyAfterStart();
const newSpace = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
// Objects that live for a while, as in-flight requests do: most survive a scavenge, which is
// what makes V8 grow the young generation. Event-loop turns between batches, as a server has.
const ring = new Array(200_000);
let largest = 0;
for (let batch = 0; batch < 400; batch += 1) {
  for (let index = 0; index < 5_000; index += 1) ring[(batch * 5_000 + index) % ring.length] = { batch, index, list: [index] };
  largest = Math.max(largest, newSpace());
  await turn();
}
process.stdout.write(String(largest));
`;

describe('heap policy', () => {
  it('lets the young generation grow under load only up to the cap', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    const largestMb = Number(stdout) / 1024 / 1024;
    expect(largestMb).toBeGreaterThan(2); // it did grow past the 1 MB semi-spaces of start-up
    // Both semi-spaces at the cap (8 MB), or one doubling past it: the check runs when the GC is
    // reported, a turn later, and a second scavenge may grow it first. Before the cap: 32 MB.
    expect(largestMb).toBeLessThanOrEqual(4 * maxSemiSpaceMb);
  });
});
