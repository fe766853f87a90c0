import type { Logger } from 'pino';
import type { ProviderAdapter, UpstreamModel } from '../providers/provider.ts';

export type ListingStatus = 'configured' | 'loading' | 'ok' | 'stale' | 'unavailable';

export interface InstanceListing {
  readonly adapter: ProviderAdapter;
  /** Model id -> model; null until a listing has been read. */
  models: Map<string, UpstreamModel> | null;
  status: ListingStatus;
  lastError: string | null;
  fetchedAt: number;
  /** When the listing was last attempted (success or not), epoch ms; throttles on-demand refreshes. */
  attemptedAt: number;
}

/** An instance declared but not registered for a missing setting (config `DisabledProvider`). */
export interface DisabledInstance {
  readonly name: string;
  readonly reason: string;
  readonly setting: string;
  readonly models: readonly string[] | null;
}

export interface CatalogOptions {
  refreshIntervalMs: number;
  recheckIntervalMs: number;
  /** Models listed in configuration, per instance name; instances absent here ask the upstream. */
  configured: ReadonlyMap<string, readonly string[]>;
  logger: Logger;
  /** Instances dropped for a missing setting: listed by readiness, their models answer 503 `provider_unavailable`. */
  disabled?: readonly DisabledInstance[];
  now?: () => number;
}

const fetchTimeoutMs = 10_000;

/**
 * The models each provider instance serves: its configured list, or the upstream's
 * GET /models, fetched at startup and refreshed periodically. A failed refresh keeps the
 * previous list; an upstream that is down never stops the gateway.
 */
export class ModelCatalog {
  /** Swapped whole by `replaceAdapters` (hot reload); a request reads it once per lookup. */
  private listings: ReadonlyMap<string, InstanceListing>;
  private readonly options: CatalogOptions;
  /** One pending refresh timer per instance. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inflight = new Map<InstanceListing, Promise<void>>();
  private stopped = false;
  private dropped: ReadonlyMap<string, DisabledInstance>;

  constructor(adapters: readonly ProviderAdapter[], options: CatalogOptions) {
    this.options = options;
    this.dropped = new Map((options.disabled ?? []).map((instance) => [instance.name, instance]));
    this.listings = new Map(adapters.map((adapter) => [adapter.name, this.newListing(adapter, options.configured)] as const));
  }

  get instances(): ReadonlyMap<string, InstanceListing> {
    return this.listings;
  }

  /** Instances dropped for a missing setting, by name. */
  get disabled(): ReadonlyMap<string, DisabledInstance> {
    return this.dropped;
  }

  /** Hot reload: the dropped instances become `instances`, in one step. */
  replaceDisabled(instances: readonly DisabledInstance[]): void {
    this.dropped = new Map(instances.map((instance) => [instance.name, instance]));
  }

  /**
   * Hot reload: the instances become `adapters`, in one step. An adapter object already in the
   * catalog keeps its listing (models, status, timer); a new one is listed as at startup,
   * waiting at most `waitMs`. Requests that already hold an adapter finish with it.
   */
  async replaceAdapters(
    adapters: readonly ProviderAdapter[],
    configured: ReadonlyMap<string, readonly string[]>,
    waitMs: number,
  ): Promise<void> {
    const previous = this.listings;
    const next = new Map(
      adapters.map((adapter) => {
        const kept = previous.get(adapter.name);
        return [adapter.name, kept?.adapter === adapter ? kept : this.newListing(adapter, configured)] as const;
      }),
    );
    for (const [name, listing] of previous) {
      if (next.get(name) === listing) continue;
      clearTimeout(this.timers.get(name));
      this.timers.delete(name);
    }
    this.listings = next;
    const added = [...next.values()].filter((listing) => previous.get(listing.adapter.name) !== listing);
    await this.listAll(added, waitMs);
  }

  private newListing(adapter: ProviderAdapter, configuredModels: ReadonlyMap<string, readonly string[]>): InstanceListing {
    const createdAt = Math.floor((this.options.now ?? Date.now)() / 1000);
    const configured = configuredModels.get(adapter.name);
    const models = configured ? new Map(configured.map((id) => [id, { id, created: createdAt }])) : null;
    return { adapter, models, status: configured ? 'configured' : 'loading', lastError: null, fetchedAt: 0, attemptedAt: 0 };
  }

  /** Fetches every upstream listing once, waiting at most `waitMs`, then keeps them fresh. */
  async start(waitMs: number): Promise<void> {
    await this.listAll([...this.listings.values()], waitMs);
  }

  private async listAll(listings: readonly InstanceListing[], waitMs: number): Promise<void> {
    const fetches = listings.filter((listing) => listing.status !== 'configured').map((listing) => this.refresh(listing.adapter.name));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
    });
    await Promise.race([Promise.allSettled(fetches), deadline]);
    clearTimeout(timer);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Refreshes one instance's upstream listing; concurrent calls share one fetch. */
  refresh(name: string): Promise<void> {
    const listing = this.instances.get(name);
    if (listing === undefined || listing.status === 'configured') return Promise.resolve();
    const running = this.inflight.get(listing);
    if (running) return running;
    const fetch = this.fetchListing(listing).finally(() => {
      this.inflight.delete(listing);
      // A listing replaced by a reload while it was fetched is not re-armed.
      if (this.listings.get(name) === listing) this.schedule(listing);
    });
    this.inflight.set(listing, fetch);
    return fetch;
  }

  /** Milliseconds since the instance's listing was last attempted (Infinity if never). */
  age(name: string): number {
    const listing = this.instances.get(name);
    return listing && listing.attemptedAt > 0 ? (this.options.now ?? Date.now)() - listing.attemptedAt : Number.POSITIVE_INFINITY;
  }

  private async fetchListing(listing: InstanceListing): Promise<void> {
    const name = listing.adapter.name;
    listing.attemptedAt = (this.options.now ?? Date.now)();
    try {
      const models = await listing.adapter.listModels(AbortSignal.timeout(fetchTimeoutMs));
      listing.models = new Map(models.map((model) => [model.id, model]));
      listing.status = 'ok';
      listing.lastError = null;
      listing.fetchedAt = (this.options.now ?? Date.now)();
      this.options.logger.info({ provider: name, models: models.length }, 'provider models loaded');
    } catch (error) {
      listing.lastError = error instanceof Error ? error.message : String(error);
      listing.status = listing.models === null ? 'unavailable' : 'stale';
      this.options.logger.warn({ provider: name, reason: listing.lastError }, 'provider model listing failed');
    }
  }

  /** (Re)arms the instance's single refresh timer; an on-demand refresh re-arms it too. */
  private schedule(listing: InstanceListing): void {
    if (this.stopped) return;
    const name = listing.adapter.name;
    clearTimeout(this.timers.get(name));
    const delay = listing.status === 'ok' ? this.options.refreshIntervalMs : this.options.recheckIntervalMs;
    const timer = setTimeout(() => {
      this.timers.delete(name);
      void this.refresh(name);
    }, delay);
    timer.unref();
    this.timers.set(name, timer);
  }
}
