export const virtualModelStrategies = ['round_robin', 'failover', 'least_busy'] as const;

export type VirtualModelStrategy = (typeof virtualModelStrategies)[number];

export interface VirtualModelTarget {
  /** Instance name; absent means "the first instance serving `model`". */
  readonly provider?: string;
  readonly model: string;
  /** round_robin weight, an integer >= 1 (default 1). */
  readonly weight: number;
}

/** A virtual model (alias) as declared (CONTRACT section 8). */
export interface VirtualModelDefinition {
  /** The name clients send as `model`; listed in GET /v1/models. */
  readonly name: string;
  readonly targets: readonly VirtualModelTarget[];
  readonly strategy: VirtualModelStrategy;
  readonly description: string;
}

/** A stored (admin-managed) virtual model. */
export interface VirtualModelRow extends VirtualModelDefinition {
  /** Epoch ms. */
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Durable admin-managed virtual models. Implementations: SQLite and PostgreSQL (src/storage/). */
export interface VirtualModelStore {
  /** Every stored virtual model, ordered by name. */
  list(): Promise<VirtualModelRow[]>;
  /** Inserts or replaces by name (case-sensitive), keeping `createdAt`. */
  upsert(row: VirtualModelRow): Promise<void>;
  /** Removes by name; false when there was none. */
  remove(name: string): Promise<boolean>;
}
