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
    // A next run already queued starts after this call: share it. (Between the end of a run and
    // the start of the queued one, `#running` is null for a moment: starting here would overlap.)
    if (this.#next !== null) return this.#next;
    if (this.#running === null) return this.#start();
    this.#next = this.#running.then(ignore, ignore).then(() => {
      this.#next = null;
      return this.#start();
    });
    return this.#next;
  }

  /**
   * For periodic ticks: joins the run in progress (or the one queued) instead of queueing
   * another. A tick needs a recent read, not one after its own call; queueing would read the
   * database back to back when a read takes longer than the interval.
   */
  runOrJoin(): Promise<void> {
    return this.#next ?? this.#running ?? this.#start();
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
