import { FreshRun } from './fresh-run.ts';

/**
 * How a service re-reads what it keeps in a store (definitions written through another replica
 * or worker): one read at a time, never joining a read that began before the caller asked
 * (`FreshRun`), and a read that began before a local write applies nothing (it may predate the
 * write). A timer re-reads periodically, joining a read in progress.
 */
export interface RereadOptions<Rows> {
  read(): Promise<Rows>;
  /** Brings the service in line with what was read. */
  apply(rows: Rows): void | Promise<void>;
  /** Runs after every queued re-read, applied or dropped (budgets read their spend here). */
  after?: () => Promise<void>;
  /** A periodic re-read failed. */
  failed(error: unknown): void;
}

export class StoreReread<Rows> {
  readonly #options: RereadOptions<Rows>;
  /** Bumped by every local write. */
  #writes = 0;
  readonly #runs = new FreshRun(() => this.#run());
  #timer: NodeJS.Timeout | null = null;

  constructor(options: RereadOptions<Rows>) {
    this.#options = options;
  }

  /** Re-reads every `intervalMs` (joining a read in progress) until `stop`. */
  every(intervalMs: number): void {
    this.stop();
    this.#timer = setInterval(() => void this.#runs.runOrJoin().catch((error: unknown) => this.#options.failed(error)), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Re-reads after any read in progress: what was written before this call is seen. */
  run(): Promise<void> {
    return this.#runs.run();
  }

  /** A local write: a read begun before it applies nothing. */
  wrote(): void {
    this.#writes += 1;
  }

  /** One read and apply outside the queue (an admin write catching up first); dropped when a local write came meanwhile. */
  async readOnce(): Promise<void> {
    const writesBefore = this.#writes;
    const rows = await this.#options.read();
    if (this.#writes === writesBefore) await this.#options.apply(rows);
  }

  async #run(): Promise<void> {
    await this.readOnce();
    await this.#options.after?.();
  }
}
