import { isJsonObject } from '../../core/json.ts';
import type { GuardrailRow, GuardrailStore } from '../../guardrails/guardrail-store.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlParameters, toNumber } from './sql-executor.ts';

const guardrailColumns = 'name, spec_json, created_at, updated_at';

interface GuardrailTableRow {
  readonly name: string;
  readonly spec_json: string;
  readonly created_at: number | string;
  readonly updated_at: number | string;
}

/** GuardrailStore over any SQL dialect. Identity: the name, case-sensitive; listed in byte order. */
export class SqlGuardrailStore implements GuardrailStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async list(): Promise<GuardrailRow[]> {
    const rows = await this.#executor.query<GuardrailTableRow>(`SELECT ${guardrailColumns} FROM guardrails ORDER BY name`);
    return rows.map(guardrailFromRow);
  }

  /** Replaces the entry and updatedAt of an existing row; keeps its createdAt. */
  async upsert(row: GuardrailRow): Promise<void> {
    const parameters = new SqlParameters(this.#executor);
    const values = [row.name, JSON.stringify(row.spec), row.createdAt, row.updatedAt].map((value) => parameters.add(value)).join(', ');
    const text = `INSERT INTO guardrails (${guardrailColumns})
      VALUES (${values})
      ON CONFLICT (name) DO UPDATE SET spec_json = excluded.spec_json, updated_at = excluded.updated_at`;
    await this.#executor.execute(text, parameters.values);
  }

  async remove(name: string): Promise<boolean> {
    const parameters = new SqlParameters(this.#executor);
    const text = `DELETE FROM guardrails WHERE name = ${parameters.add(name)}`;
    return (await this.#executor.execute(text, parameters.values)) > 0;
  }
}

function guardrailFromRow(row: GuardrailTableRow): GuardrailRow {
  const spec: unknown = JSON.parse(row.spec_json);
  if (!isJsonObject(spec)) throw new Error(`guardrails row "${row.name}": spec_json is not an object`);
  return { name: row.name, spec, createdAt: toNumber(row.created_at), updatedAt: toNumber(row.updated_at) };
}
