import { once } from 'node:events';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { projectRoot } from '../../core/project-root.ts';
import type { SqlValue } from '../sql/sql-executor.ts';
import { fromWriterFailure, type InsertBatch, type WriterReply, type WriterRequest, type WriterStart } from './writer-protocol.ts';

const closeTimeoutMs = 10_000;

/**
 * The thread runs tsc's compiled `dist/storage/sqlite/sqlite-writer-thread.js` (found from the
 * project root, since this code may run from the start-up bundle in `dist/chunks/`). Run from
 * sources (tests, `npm run dev`), it runs the TypeScript sibling: the thread registers tsx (a
 * dev dependency) first, since Node 20 does not pass `--import` loaders on to worker threads.
 */
function createThread(workerData: WriterStart): Worker {
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(join(projectRoot(import.meta.url), 'dist', 'storage', 'sqlite', 'sqlite-writer-thread.js'), { workerData });
  }
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./sqlite-writer-thread.ts', import.meta.url).href;
  const bootstrap = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(entry)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`), { workerData });
}

/** The writer thread cannot run (it failed to start or died): the caller writes on its own connection. */
export class SqliteWriterUnavailable extends Error {
  constructor(cause: unknown) {
    super('the SQLite writer thread is unavailable', { cause });
  }
}

interface Pending {
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Batch inserts on a worker thread with its own connection (WAL lets both connections work on
 * one file). Started on the first insert, so a gateway that records nothing never starts it;
 * ref'd only while a batch is pending. A thread that fails stays failed: the executor then
 * inserts on the main connection, as it would without a thread.
 */
export class SqliteWriter {
  readonly #start: WriterStart;
  readonly #pending = new Map<number, Pending>();
  /** Batches of this event-loop turn, not yet posted. */
  #queued: { batch: InsertBatch; pending: Pending }[] = [];
  #thread: Promise<Worker> | null = null;
  #nextId = 1;
  #failed = false;
  #closing = false;
  #started = false;
  /** Settles when the started thread exits, whatever the reason (close waits on it, once or twice). */
  #exit: Promise<unknown> = Promise.resolve();

  constructor(start: WriterStart) {
    this.#start = start;
  }

  /** Whether the thread is up (tests check that inserts really leave the main thread). */
  get running(): boolean {
    return this.#started && !this.#failed && !this.#closing;
  }

  /**
   * Queues a batch; the batches of one event-loop turn (the usage and request log recorders
   * flush on the same tick) go to the thread at its end as one message and are committed in one
   * transaction, each batch all or nothing and settled on its own (ADR 23).
   */
  insertRows(table: string, columns: readonly string[], rows: readonly (readonly SqlValue[])[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.#queued.length === 0) setImmediate(() => void this.#send());
      this.#queued.push({ batch: { id: this.#nextId++, table, columns, rows }, pending: { resolve, reject } });
    });
  }

  async #send(): Promise<void> {
    const queued = this.#queued;
    this.#queued = [];
    if (queued.length === 0) return;
    let worker: Worker;
    try {
      worker = await this.#ensureThread();
    } catch (error) {
      for (const { pending } of queued) pending.reject(error as Error);
      return;
    }
    if (this.#pending.size === 0) worker.ref();
    for (const { batch, pending } of queued) this.#pending.set(batch.id, pending);
    worker.postMessage({ kind: 'insert', batches: queued.map(({ batch }) => batch) } satisfies WriterRequest);
  }

  /** Stops the thread at once; batches still pending fail (the executor then writes them itself). */
  async terminate(): Promise<void> {
    const worker = await this.#thread?.catch(() => null);
    await worker?.terminate();
  }

  /** Lets pending batches finish, then closes the thread's connection. */
  async close(): Promise<void> {
    await this.#send(); // this turn's batches go before the close message
    this.#closing = true;
    const worker = await this.#thread?.catch(() => null);
    if (worker === null || worker === undefined) return;
    // A thread that has exited already (it died, or a first close ended it) ignores both.
    worker.ref();
    worker.postMessage({ kind: 'close' } satisfies WriterRequest);
    const timer = setTimeout(() => void worker.terminate(), closeTimeoutMs);
    await this.#exit;
    clearTimeout(timer);
  }

  #ensureThread(): Promise<Worker> {
    if (this.#failed || this.#closing) return Promise.reject(new SqliteWriterUnavailable(null));
    this.#thread ??= this.#startThread().catch((error: unknown) => {
      this.#failed = true;
      throw new SqliteWriterUnavailable(error);
    });
    return this.#thread;
  }

  async #startThread(): Promise<Worker> {
    // Ref'd until ready: an insert awaiting the start (the last flush at shutdown) keeps the process up.
    const worker = createThread(this.#start);
    const [first] = (await Promise.race([once(worker, 'message'), once(worker, 'exit')])) as [WriterReply | number];
    if (typeof first === 'number') throw new Error(`the writer thread exited with code ${first} before it was ready`);
    if (first.kind !== 'ready') {
      await worker.terminate();
      throw first.kind === 'start_failed' ? fromWriterFailure(first.error) : new Error('unexpected first message');
    }
    worker.on('message', (reply: WriterReply) => this.#settle(worker, reply));
    worker.on('error', (error) => this.#fail(error));
    this.#exit = once(worker, 'exit').then(([code]) => this.#fail(new Error(`the writer thread exited with code ${String(code)}`)));
    this.#started = true;
    worker.unref(); // the insert that started it refs it again while its batch is pending
    return worker;
  }

  #settle(worker: Worker, reply: WriterReply): void {
    if (reply.kind !== 'done') return;
    for (const { id, error } of reply.results) {
      const pending = this.#pending.get(id);
      if (pending === undefined) continue;
      this.#pending.delete(id);
      if (error === null) pending.resolve();
      else pending.reject(fromWriterFailure(error));
    }
    if (this.#pending.size === 0 && !this.#closing) worker.unref();
  }

  #fail(error: Error): void {
    if (!this.#closing) this.#failed = true;
    for (const pending of this.#pending.values()) pending.reject(new SqliteWriterUnavailable(error));
    this.#pending.clear();
  }
}
