import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

/** The most log bytes kept in memory while stdout is not being read; lines past it are dropped. */
const maxPendingBytes = 8 * 1024 * 1024;

/**
 * Where the logger writes: process.stdout, which Node writes to a pipe without blocking the
 * event loop. pino's default destination writes synchronously and, when the reader of a pipe
 * stops reading (a stuck log shipper, a parent that died without closing it), sleeps in
 * `Atomics.wait` and retries forever: the process then never runs its SIGTERM handler. Here a
 * full pipe costs memory up to a bound, then dropped lines (counted, reported once the pipe
 * drains), never a blocked event loop.
 */
export class LogDestination {
  readonly #output: Writable;
  #dropped = 0;
  #broken = false;

  constructor(output: Writable = process.stdout) {
    this.#output = output;
    // EPIPE and the like: the reader is gone, logging stops (as pino does on a broken pipe).
    output.on('error', () => {
      this.#broken = true;
    });
  }

  write(line: string): void {
    if (this.#broken) return;
    if (this.#output.writableLength > maxPendingBytes) {
      if (this.#dropped === 0) this.#output.once('drain', () => this.#reportDropped());
      this.#dropped += 1;
      return;
    }
    this.#output.write(line);
  }

  /** Waits until what was written reached the pipe, at most `timeoutMs` (before process.exit). */
  async waitUntilWritten(timeoutMs: number): Promise<void> {
    if (this.#broken || this.#output.writableLength === 0) return;
    const abort = new AbortController();
    const drained = once(this.#output, 'drain', { signal: abort.signal }).catch(() => undefined);
    const timedOut = sleep(timeoutMs, undefined, { signal: abort.signal }).catch(() => undefined);
    await Promise.race([drained, timedOut]);
    abort.abort();
  }

  #reportDropped(): void {
    const dropped = this.#dropped;
    this.#dropped = 0;
    const line = {
      level: 40,
      time: Date.now(),
      service: 'model-gateway',
      dropped_lines: dropped,
      msg: 'log lines dropped: stdout was not read',
    };
    this.write(`${JSON.stringify(line)}\n`);
  }
}
