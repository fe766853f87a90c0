import {
  virtualModelStrategies,
  type VirtualModelRow,
  type VirtualModelStore,
  type VirtualModelStrategy,
  type VirtualModelTarget,
} from '../../routing/virtual-model.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlParameters, toNumber } from './sql-executor.ts';

const virtualModelColumns = 'name, targets_json, strategy, description, created_at, updated_at';

interface VirtualModelTableRow {
  readonly name: string;
  readonly targets_json: string;
  readonly strategy: string;
  readonly description: string;
  readonly created_at: number | string;
  readonly updated_at: number | string;
}

/** The stored form of one target: `provider` only when the target names an instance. */
interface StoredTarget {
  readonly provider?: string;
  readonly model: string;
  readonly weight: number;
}

/** VirtualModelStore over any SQL dialect. Identity: the name, case-sensitive; listed in byte order. */
export class SqlVirtualModelStore implements VirtualModelStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async list(): Promise<VirtualModelRow[]> {
    const rows = await this.#executor.query<VirtualModelTableRow>(`SELECT ${virtualModelColumns} FROM virtual_models ORDER BY name`);
    return rows.map(virtualModelFromRow);
  }

  /** Replaces targets, strategy, description and updatedAt of an existing row; keeps its createdAt. */
  async upsert(row: VirtualModelRow): Promise<void> {
    const parameters = new SqlParameters(this.#executor);
    const values = [row.name, JSON.stringify(row.targets.map(storedTarget)), row.strategy, row.description, row.createdAt, row.updatedAt]
      .map((value) => parameters.add(value))
      .join(', ');
    const text = `INSERT INTO virtual_models (${virtualModelColumns})
      VALUES (${values})
      ON CONFLICT (name) DO UPDATE SET
        targets_json = excluded.targets_json, strategy = excluded.strategy, description = excluded.description,
        updated_at = excluded.updated_at`;
    await this.#executor.execute(text, parameters.values);
  }

  async remove(name: string): Promise<boolean> {
    const parameters = new SqlParameters(this.#executor);
    const text = `DELETE FROM virtual_models WHERE name = ${parameters.add(name)}`;
    return (await this.#executor.execute(text, parameters.values)) > 0;
  }
}

function storedTarget(target: VirtualModelTarget): StoredTarget {
  return target.provider === undefined
    ? { model: target.model, weight: target.weight }
    : { provider: target.provider, model: target.model, weight: target.weight };
}

function virtualModelFromRow(row: VirtualModelTableRow): VirtualModelRow {
  return {
    name: row.name,
    targets: targetsFromJson(row.name, row.targets_json),
    strategy: strategyOf(row.name, row.strategy),
    description: row.description,
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function targetsFromJson(name: string, json: string): VirtualModelTarget[] {
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed)) throw new Error(`virtual_models row "${name}": targets_json is not a list`);
  return parsed.map((item: unknown) => {
    if (typeof item !== 'object' || item === null) throw new Error(`virtual_models row "${name}": a target is not an object`);
    const { provider, model, weight } = item as Record<string, unknown>;
    if (typeof model !== 'string' || typeof weight !== 'number' || (provider !== undefined && typeof provider !== 'string')) {
      throw new Error(`virtual_models row "${name}": a target is malformed`);
    }
    return provider === undefined ? { model, weight } : { provider, model, weight };
  });
}

function strategyOf(name: string, strategy: string): VirtualModelStrategy {
  const known = virtualModelStrategies.find((candidate) => candidate === strategy);
  if (known === undefined) throw new Error(`virtual_models row "${name}": unknown strategy "${strategy}"`);
  return known;
}
