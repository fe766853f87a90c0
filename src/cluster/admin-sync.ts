import type { WorkerHub } from './worker-hub.ts';

/** How long an admin write waits for the other workers to re-read before it is answered anyway. */
const syncTimeoutMs = 5_000;

interface Waiting {
  readonly remaining: Set<number>;
  done(): void;
}

/**
 * Admin writes reach every worker before they are answered: the worker that made one asks
 * (`sync`), the primary tells every other worker to reload and answers once each has
 * (`reloaded`), died, or `syncTimeoutMs` passed (the periodic refresh catches up then).
 */
export class AdminSync {
  private nextToken = 1;
  private readonly waiting = new Map<number, Waiting>();

  serve(hub: WorkerHub): void {
    hub.handle('sync', (workerId, args) => {
      const token = this.nextToken++;
      const targets = hub.broadcast('reload', { token, path: (args as { path: string }).path }, workerId);
      if (targets.length === 0) return null;
      return new Promise<null>((resolve) => {
        const timer = setTimeout(() => finish(), syncTimeoutMs);
        const finish = (): void => {
          clearTimeout(timer);
          this.waiting.delete(token);
          resolve(null);
        };
        this.waiting.set(token, { remaining: new Set(targets), done: finish });
      });
    });
    hub.handle('reloaded', (workerId, token) => this.answered(token as number, workerId));
  }

  /** A worker that died is not waited for. */
  workerGone(workerId: number): void {
    for (const token of [...this.waiting.keys()]) this.answered(token, workerId);
  }

  private answered(token: number, workerId: number): null {
    const waiting = this.waiting.get(token);
    waiting?.remaining.delete(workerId);
    if (waiting !== undefined && waiting.remaining.size === 0) waiting.done();
    return null;
  }
}
