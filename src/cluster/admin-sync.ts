import type { WorkerHub } from './worker-hub.ts';
import { WorkerPoll } from './worker-poll.ts';

/** How long an admin write waits for the other workers to re-read before it is answered anyway. */
const syncTimeoutMs = 5_000;

/**
 * Admin writes reach every worker before they are answered: the worker that made one asks
 * (`sync`), the primary tells every other worker to reload and answers once each has
 * (`reloaded`), died, or `syncTimeoutMs` passed (the periodic refresh catches up then).
 */
export class AdminSync {
  private poll: WorkerPoll | null = null;

  serve(hub: WorkerHub): void {
    const poll = new WorkerPoll(hub, 'reload', syncTimeoutMs);
    this.poll = poll;
    hub.handle('sync', async (workerId, args) => {
      await poll.ask({ path: (args as { path: string }).path }, workerId);
      return null;
    });
    hub.handle('reloaded', (workerId, token) => poll.answered(token as number, workerId));
  }

  /** A worker that died is not waited for. */
  workerGone(workerId: number): void {
    this.poll?.workerGone(workerId);
  }
}
