import type { Logger } from 'pino';
import { StoreReread } from './store-reread.ts';

/** When a definition was stored, and whether it comes from configuration (read-only) or the admin API. */
export interface Stamped {
  readonly origin: 'config' | 'manual';
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A definition as its store keeps it. */
export type DefinitionRow<D> = D & { createdAt: number; updatedAt: number };

/** The store port of one kind of definition, keyed by a string. */
export interface DefinitionStore<D> {
  list(): Promise<DefinitionRow<D>[]>;
  upsert(row: DefinitionRow<D>): Promise<void>;
  remove(key: string): Promise<boolean>;
}

export interface StoredDefinitionsOptions<D> {
  store: DefinitionStore<D>;
  configDefinitions: readonly D[];
  logger: Logger;
  now?: () => number;
  /** How often stored definitions are re-read (changes made through another replica); never when absent. */
  reloadIntervalMs?: number;
}

/** What differs between the kinds: the key, the log field, and the errors. */
export interface DefinitionKind<D> {
  keyOf(definition: D): string;
  /** The log field naming a definition, e.g. `virtual_model`. */
  logField: string;
  /** Its name in log messages, e.g. `virtual model`. */
  noun: string;
  notFound(key: string): Error;
  readOnly(key: string): Error;
}

/**
 * Definitions from configuration (read-only) and the admin API (stored), keyed by a string.
 * Replicas pick up each other's changes: the store is re-read every `reloadIntervalMs`, and
 * before every local write.
 */
export class StoredDefinitions<D> {
  protected readonly entries = new Map<string, D & Stamped>();
  private readonly options: StoredDefinitionsOptions<D>;
  private readonly kind: DefinitionKind<D>;
  private readonly now: () => number;
  private readonly rereads: StoreReread<DefinitionRow<D>[]>;

  constructor(options: StoredDefinitionsOptions<D>, kind: DefinitionKind<D>) {
    this.options = options;
    this.kind = kind;
    this.now = options.now ?? Date.now;
    this.rereads = new StoreReread({
      read: () => options.store.list(),
      apply: (rows) => this.applyStored(rows),
      failed: (error) => options.logger.warn({ err: error }, `${kind.noun} reload failed`),
    });
  }

  async start(): Promise<void> {
    const at = this.now();
    for (const definition of this.options.configDefinitions) {
      this.entries.set(this.kind.keyOf(definition), { ...definition, origin: 'config', createdAt: at, updatedAt: at });
    }
    for (const row of await this.options.store.list()) {
      const key = this.kind.keyOf(row);
      if (this.entries.get(key)?.origin === 'config') {
        this.options.logger.warn({ [this.kind.logField]: key }, `a stored ${this.kind.noun} is shadowed by a configuration one`);
        continue;
      }
      this.entries.set(key, { ...row, origin: 'manual' });
    }
    if (this.options.reloadIntervalMs !== undefined) this.rereads.every(this.options.reloadIntervalMs);
  }

  stop(): void {
    this.rereads.stop();
  }

  /** Applies the stored definitions as another replica left them, after any read in progress; configuration ones stay. */
  reload(): Promise<void> {
    return this.rereads.run();
  }

  private applyStored(rows: readonly DefinitionRow<D>[]): void {
    const stored = new Set(rows.map((row) => this.kind.keyOf(row)));
    for (const [key, entry] of this.entries) {
      if (entry.origin === 'manual' && !stored.has(key)) {
        this.entries.delete(key);
        this.forget(key);
      }
    }
    for (const row of rows) {
      const key = this.kind.keyOf(row);
      if (this.entries.get(key)?.origin !== 'config') this.entries.set(key, { ...row, origin: 'manual' });
    }
    this.reloaded();
  }

  /** Runs after a reload has applied what it read (a subclass rebuilds what depends on the entries). */
  protected reloaded(): void {}

  /**
   * Hot reload: replaces the configuration definitions in one step. One no longer declared is
   * forgotten (a stored one it shadowed comes back from the store); a kept one keeps its creation time.
   */
  async applyConfigDefinitions(definitions: readonly D[]): Promise<void> {
    const at = this.now();
    const declared = new Map(definitions.map((definition) => [this.kind.keyOf(definition), definition]));
    for (const [key, entry] of this.entries) {
      if (entry.origin === 'config' && !declared.has(key)) {
        this.entries.delete(key);
        this.forget(key);
      }
    }
    for (const [key, definition] of declared) {
      const existing = this.entries.get(key);
      const createdAt = existing?.origin === 'config' ? existing.createdAt : at;
      this.entries.set(key, { ...definition, origin: 'config', createdAt, updatedAt: at });
    }
    await this.reload();
  }

  get size(): number {
    return this.entries.size;
  }

  async upsert(definition: D): Promise<D & Stamped> {
    // Catch up with the database first: the definition may have been made through another replica.
    await this.reload();
    const key = this.kind.keyOf(definition);
    const existing = this.entries.get(key);
    if (existing?.origin === 'config') throw this.kind.readOnly(key);
    const at = this.now();
    const row = { ...definition, createdAt: existing?.createdAt ?? at, updatedAt: at };
    await this.options.store.upsert(row);
    this.rereads.wrote();
    const entry: D & Stamped = { ...row, origin: 'manual' };
    this.entries.set(key, entry);
    return entry;
  }

  async remove(key: string): Promise<void> {
    await this.reload();
    const existing = this.entries.get(key);
    if (existing === undefined) throw this.kind.notFound(key);
    if (existing.origin === 'config') throw this.kind.readOnly(key);
    await this.options.store.remove(key);
    this.rereads.wrote();
    this.entries.delete(key);
    this.forget(key);
  }

  /** Drops what a subclass keeps about a removed definition. */
  protected forget(_key: string): void {}
}
