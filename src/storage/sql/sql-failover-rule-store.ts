import { failoverTriggers, type FailoverRuleRow, type FailoverRuleStore, type FailoverTrigger } from '../../routing/failover-rule.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlParameters, toNumber } from './sql-executor.ts';

const failoverRuleColumns = 'model, fallbacks_json, on_json, created_at, updated_at';

interface FailoverRuleTableRow {
  readonly model: string;
  readonly fallbacks_json: string;
  readonly on_json: string;
  readonly created_at: number | string;
  readonly updated_at: number | string;
}

/** FailoverRuleStore over any SQL dialect. Identity: the model, case-sensitive; listed in byte order. */
export class SqlFailoverRuleStore implements FailoverRuleStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async list(): Promise<FailoverRuleRow[]> {
    const rows = await this.#executor.query<FailoverRuleTableRow>(`SELECT ${failoverRuleColumns} FROM failover_rules ORDER BY model`);
    return rows.map(failoverRuleFromRow);
  }

  /** Replaces fallbacks, triggers and updatedAt of an existing row; keeps its createdAt. */
  async upsert(row: FailoverRuleRow): Promise<void> {
    const parameters = new SqlParameters(this.#executor);
    const values = [row.model, JSON.stringify(row.fallbacks), JSON.stringify(row.on), row.createdAt, row.updatedAt]
      .map((value) => parameters.add(value))
      .join(', ');
    const text = `INSERT INTO failover_rules (${failoverRuleColumns})
      VALUES (${values})
      ON CONFLICT (model) DO UPDATE SET
        fallbacks_json = excluded.fallbacks_json, on_json = excluded.on_json, updated_at = excluded.updated_at`;
    await this.#executor.execute(text, parameters.values);
  }

  async remove(model: string): Promise<boolean> {
    const parameters = new SqlParameters(this.#executor);
    const text = `DELETE FROM failover_rules WHERE model = ${parameters.add(model)}`;
    return (await this.#executor.execute(text, parameters.values)) > 0;
  }
}

function failoverRuleFromRow(row: FailoverRuleTableRow): FailoverRuleRow {
  return {
    model: row.model,
    fallbacks: stringsFromJson(row.model, 'fallbacks_json', row.fallbacks_json),
    on: stringsFromJson(row.model, 'on_json', row.on_json).map((value) => triggerOf(row.model, value)),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function stringsFromJson(model: string, column: string, json: string): string[] {
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed) || !parsed.every((item): item is string => typeof item === 'string')) {
    throw new Error(`failover_rules row "${model}": ${column} is not a list of strings`);
  }
  return parsed;
}

function triggerOf(model: string, value: string): FailoverTrigger {
  const known = failoverTriggers.find((candidate) => candidate === value);
  if (known === undefined) throw new Error(`failover_rules row "${model}": unknown trigger "${value}"`);
  return known;
}
