import type { Logger } from 'pino';
import type { RequestLogStore } from './request-log-store.ts';

export interface RetentionSweepOptions {
  store: RequestLogStore;
  retentionDays: number;
  /** Rows deleted per statement: each delete is short, so writers and readers are never held long. */
  batchSize?: number;
  /** Between sweeps. */
  intervalMs?: number;
  /** Between two batches of one sweep. */
  pauseMs?: number;
  logger: Logger;
  now?: () => number;
}

const day = 86_400_000;

/**
 * Deletes request log entries older than the retention in bounded batches, in the background:
 * one sweep at start and then every `intervalMs`, each batch a separate short statement.
 */
export class RetentionSweep {
  private readonly options: RetentionSweepOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(options: RetentionSweepOptions) {
    this.options = options;
  }

  start(): void {
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), this.options.intervalMs ?? 3_600_000);
    this.timer.unref();
  }

  /** One sweep (shared when one runs); resolves to the number of entries deleted. */
  sweep(): Promise<number> {
    this.running ??= this.deleteExpired().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  private async deleteExpired(): Promise<number> {
    const { store, retentionDays, logger } = this.options;
    const batchSize = this.options.batchSize ?? 1_000;
    const before = (this.options.now ?? Date.now)() - retentionDays * day;
    let deleted = 0;
    try {
      while (!this.stopped) {
        const count = await store.deleteOlderThan(before, batchSize);
        deleted += count;
        if (count < batchSize) break;
        await new Promise((resolve) => setTimeout(resolve, this.options.pauseMs ?? 50));
      }
      if (deleted > 0) logger.info({ deleted, retention_days: retentionDays }, 'request log entries past retention deleted');
    } catch (error) {
      logger.error({ err: error }, 'request log retention sweep failed; will retry');
    }
    return deleted;
  }
}
