/**
 * Runs an async task one at a time, and never hands a caller a run that began before its call.
 * A call while a run is going waits for the next run, which starts once the current one has
 * ended; every call made meanwhile shares that next run. (Joining the run in progress would be
 * cheaper but wrong for re-reads: that run may have read the database before the write the
 * caller must see, e.g. an admin write made through another worker.)
 */
export class FreshRun {
  readonly #task: () => Promise<void>;
  #running: Promise<void> | null = null;
  #next: Promise<void> | null = null;

  constructor(task: () => Promise<void>) {
    this.#task = task;
  }

  run(): Promise<void> {
    if (this.#running === null) return this.#start();
    this.#next ??= this.#running.then(ignore, ignore).then(() => {
      this.#next = null;
      return this.#start();
    });
    return this.#next;
  }

  #start(): Promise<void> {
    const running = this.#task().finally(() => {
      if (this.#running === running) this.#running = null;
    });
    this.#running = running;
    return running;
  }
}

function ignore(): void {}
