import { describe, expect, it } from 'vitest';
import type { WorkerHub } from './worker-hub.ts';
import { WorkerPoll } from './worker-poll.ts';

/** A hub with workers 1, 2 and 3 that records what was broadcast. */
function fakeHub(): { hub: WorkerHub; sent: Array<{ event: string; data: unknown; except?: number }> } {
  const sent: Array<{ event: string; data: unknown; except?: number }> = [];
  const hub = {
    broadcast(event: string, data: unknown, except?: number): number[] {
      sent.push({ event, data, except });
      return [1, 2, 3].filter((id) => id !== except);
    },
  };
  return { hub: hub as unknown as WorkerHub, sent };
}

describe('WorkerPoll', () => {
  it('resolves once each asked worker answered or died, ignoring strays', async () => {
    const { hub, sent } = fakeHub();
    const poll = new WorkerPoll(hub, 'collect', 60_000);
    let done = false;
    const asked = poll.ask({ what: 'x' }, 2).then(() => (done = true));
    expect(sent).toEqual([{ event: 'collect', data: { what: 'x', token: 1 }, except: 2 }]);
    poll.answered(1, 2);
    poll.answered(1, 1);
    poll.answered(1, 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    poll.workerGone(3);
    await asked;
    expect(done).toBe(true);
  });

  it('resolves after the timeout when a worker does not answer', async () => {
    const poll = new WorkerPoll(fakeHub().hub, 'collect', 10);
    const asked = poll.ask({});
    poll.answered(1, 3);
    await expect(asked).resolves.toBeUndefined();
  });
});
