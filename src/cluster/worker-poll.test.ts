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
  it('resolves with every answer once each asked worker answered or died, ignoring strays', async () => {
    const { hub, sent } = fakeHub();
    const poll = new WorkerPoll(hub, 'collect', 60_000);
    const asked = poll.ask({ what: 'x' }, 2);
    expect(sent).toEqual([{ event: 'collect', data: { what: 'x', token: 1 }, except: 2 }]);
    poll.answered(1, 2, 'not asked');
    poll.answered(1, 1, 'one');
    poll.answered(1, 1, 'twice');
    poll.workerGone(3);
    expect(await asked).toEqual(['one']);
  });

  it('resolves with what it has after the timeout', async () => {
    const poll = new WorkerPoll(fakeHub().hub, 'collect', 10);
    const asked = poll.ask({});
    poll.answered(1, 3, 'three');
    expect(await asked).toEqual(['three']);
  });
});
