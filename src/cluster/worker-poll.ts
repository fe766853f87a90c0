import type { WorkerHub } from './worker-hub.ts';

interface Waiting {
  readonly remaining: Set<number>;
  done(): void;
}

/**
 * The primary asks every live worker (but one) the same thing and waits for them: `ask` resolves
 * once each has answered, died, or `timeoutMs` passed.
 */
export class WorkerPoll {
  private readonly hub: WorkerHub;
  private readonly event: string;
  private readonly timeoutMs: number;
  private nextToken = 1;
  private readonly waiting = new Map<number, Waiting>();

  constructor(hub: WorkerHub, event: string, timeoutMs: number) {
    this.hub = hub;
    this.event = event;
    this.timeoutMs = timeoutMs;
  }

  /** Sends `{...data, token}` to the workers; each answers with `answered(token, ...)`. */
  ask(data: Record<string, unknown>, except?: number): Promise<void> {
    const token = this.nextToken++;
    const targets = this.hub.broadcast(this.event, { ...data, token }, except);
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(), this.timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.waiting.delete(token);
        resolve();
      };
      this.waiting.set(token, { remaining: new Set(targets), done: finish });
      if (targets.length === 0) finish();
    });
  }

  answered(token: number, workerId: number): null {
    const waiting = this.waiting.get(token);
    if (waiting === undefined || !waiting.remaining.delete(workerId)) return null;
    if (waiting.remaining.size === 0) waiting.done();
    return null;
  }

  /** A worker that died is not waited for. */
  workerGone(workerId: number): void {
    for (const token of [...this.waiting.keys()]) this.answered(token, workerId);
  }
}
