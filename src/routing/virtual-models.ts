import type { Logger } from 'pino';
import { invalidRequest, notFound, type GatewayError } from '../errors/gateway-error.ts';
import type { VirtualModelDefinition, VirtualModelRow, VirtualModelStore } from './virtual-model.ts';

export interface VirtualModel extends VirtualModelDefinition {
  readonly origin: 'config' | 'manual';
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface VirtualModelsOptions {
  store: VirtualModelStore;
  configModels: readonly VirtualModelDefinition[];
  logger: Logger;
  now?: () => number;
  /** How often stored virtual models are re-read (changes made through another replica); never when absent. */
  reloadIntervalMs?: number;
}

/**
 * Virtual models (aliases) from configuration (read-only) and the admin API (stored), and the
 * round-robin position of each.
 */
export class VirtualModels {
  private readonly options: VirtualModelsOptions;
  private readonly now: () => number;
  private readonly models = new Map<string, VirtualModel>();
  private readonly positions = new Map<string, number>();
  /** Bumped by every local write, so a reload that read the store before it is dropped. */
  private writes = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(options: VirtualModelsOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    const at = this.now();
    for (const definition of this.options.configModels)
      this.models.set(definition.name, { ...definition, origin: 'config', createdAt: at, updatedAt: at });
    for (const row of await this.options.store.list()) {
      if (this.models.get(row.name)?.origin === 'config') {
        this.options.logger.warn({ virtual_model: row.name }, 'a stored virtual model is shadowed by a configuration one');
        continue;
      }
      this.models.set(row.name, { ...row, origin: 'manual' });
    }
    const interval = this.options.reloadIntervalMs;
    if (interval === undefined) return;
    this.timer = setInterval(
      () => void this.reload().catch((error: unknown) => this.options.logger.warn({ err: error }, 'virtual model reload failed')),
      interval,
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Applies the stored virtual models as another replica left them; configuration ones stay. */
  async reload(): Promise<void> {
    const writesBefore = this.writes;
    const rows = await this.options.store.list();
    if (this.writes !== writesBefore) return;
    const stored = new Map<string, VirtualModelRow>(rows.map((row) => [row.name, row]));
    for (const [name, model] of this.models) {
      if (model.origin === 'manual' && !stored.has(name)) {
        this.models.delete(name);
        this.positions.delete(name);
      }
    }
    for (const row of rows) {
      if (this.models.get(row.name)?.origin !== 'config') this.models.set(row.name, { ...row, origin: 'manual' });
    }
  }

  get size(): number {
    return this.models.size;
  }

  get(name: string): VirtualModel | undefined {
    return this.models.get(name);
  }

  list(): VirtualModel[] {
    return [...this.models.values()].sort((left, right) => left.name.localeCompare(right.name));
  }

  async upsert(definition: VirtualModelDefinition): Promise<VirtualModel> {
    // Catch up with the database first: the model may have been made through another replica.
    await this.reload();
    const existing = this.models.get(definition.name);
    if (existing?.origin === 'config') throw readOnly(definition.name);
    const at = this.now();
    const row = { ...definition, createdAt: existing?.createdAt ?? at, updatedAt: at };
    await this.options.store.upsert(row);
    this.writes += 1;
    const model: VirtualModel = { ...row, origin: 'manual' };
    this.models.set(definition.name, model);
    return model;
  }

  async remove(name: string): Promise<void> {
    await this.reload();
    const existing = this.models.get(name);
    if (existing === undefined) throw notFound(`no virtual model named ${name}`, { code: 'virtual_model_not_found' });
    if (existing.origin === 'config') throw readOnly(name);
    await this.options.store.remove(name);
    this.writes += 1;
    this.models.delete(name);
    this.positions.delete(name);
  }

  /**
   * Weighted round robin over the declared targets: target i owns `weight` consecutive slots
   * of a cycle of sum(weights). Unavailable targets give their slot to the next available one.
   */
  pickRoundRobin(model: VirtualModel, available: readonly boolean[]): number {
    const total = model.targets.reduce((sum, target) => sum + target.weight, 0);
    let position = (this.positions.get(model.name) ?? 0) % total;
    for (let tried = 0; tried < model.targets.length; tried += 1) {
      // The target owning `position` in the cycle, found by walking cumulative weights.
      let index = 0;
      let start = 0;
      while (index < model.targets.length - 1 && position >= start + (model.targets[index]?.weight ?? 1)) {
        start += model.targets[index]?.weight ?? 1;
        index += 1;
      }
      if (available[index]) {
        this.positions.set(model.name, (position + 1) % total);
        return index;
      }
      position = (start + (model.targets[index]?.weight ?? 1)) % total;
    }
    return -1;
  }
}

function readOnly(name: string): GatewayError {
  return invalidRequest(`the virtual model ${name} comes from configuration and is read-only`, {
    status: 409,
    code: 'virtual_model_read_only',
  });
}
