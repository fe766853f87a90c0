import type { Logger } from 'pino';
import { invalidRequest, notFound, type GatewayError } from '../errors/gateway-error.ts';
import { StoredDefinitions, type DefinitionKind } from '../core/stored-definitions.ts';
import type { VirtualModelDefinition, VirtualModelStore } from './virtual-model.ts';

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
export class VirtualModels extends StoredDefinitions<VirtualModelDefinition> {
  private readonly positions = new Map<string, number>();

  constructor(options: VirtualModelsOptions) {
    const { configModels, ...rest } = options;
    super({ ...rest, configDefinitions: configModels }, virtualModelKind);
  }

  get(name: string): VirtualModel | undefined {
    return this.entries.get(name);
  }

  list(): VirtualModel[] {
    return [...this.entries.values()].sort((left, right) => left.name.localeCompare(right.name));
  }

  protected override forget(name: string): void {
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

const virtualModelKind: DefinitionKind<VirtualModelDefinition> = {
  keyOf: (model) => model.name,
  logField: 'virtual_model',
  noun: 'virtual model',
  notFound: (name) => notFound(`no virtual model named ${name}`, { code: 'virtual_model_not_found' }),
  readOnly: (name) => readOnly(name),
};

function readOnly(name: string): GatewayError {
  return invalidRequest(`the virtual model ${name} comes from configuration and is read-only`, {
    status: 409,
    code: 'virtual_model_read_only',
  });
}
