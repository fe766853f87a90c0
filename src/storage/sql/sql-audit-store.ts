import type { AuditEntry, AuditQuery, AuditStore } from '../../audit/audit-store.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlParameters, toNumber } from './sql-executor.ts';

const auditColumns = 'id, time, actor, action, resource, before_json, after_json';

interface AuditTableRow {
  readonly id: string;
  readonly time: number | string;
  readonly actor: string;
  readonly action: string;
  readonly resource: string;
  readonly before_json: string | null;
  readonly after_json: string | null;
}

/** AuditStore over any SQL dialect; entries are only ever added. */
export class SqlAuditStore implements AuditStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async insert(entry: AuditEntry): Promise<void> {
    const parameters = new SqlParameters(this.#executor);
    const values = [entry.id, entry.time, entry.actor, entry.action, entry.resource, jsonOrNull(entry.before), jsonOrNull(entry.after)]
      .map((value) => parameters.add(value))
      .join(', ');
    await this.#executor.execute(`INSERT INTO admin_audit (${auditColumns}) VALUES (${values})`, parameters.values);
  }

  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const parameters = new SqlParameters(this.#executor);
    const conditions: string[] = [];
    if (query.from !== undefined) conditions.push(`time >= ${parameters.add(query.from)}`);
    if (query.to !== undefined) conditions.push(`time < ${parameters.add(query.to)}`);
    if (query.actor !== undefined) conditions.push(`actor = ${parameters.add(query.actor)}`);
    if (query.action !== undefined) conditions.push(`action = ${parameters.add(query.action)}`);
    if (query.before !== undefined) conditions.push(`id < ${parameters.add(query.before)}`);
    if (query.resource !== undefined) {
      const prefix = `${query.resource}/`;
      conditions.push(
        `(resource = ${parameters.add(query.resource)} OR substr(resource, 1, ${parameters.add(prefix.length)}) = ${parameters.add(prefix)})`,
      );
    }
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const text = `SELECT ${auditColumns} FROM admin_audit ${where} ORDER BY id DESC LIMIT ${parameters.add(query.limit)}`;
    const rows = await this.#executor.query<AuditTableRow>(text, parameters.values);
    return rows.map(entryFromRow);
  }
}

const jsonOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

function entryFromRow(row: AuditTableRow): AuditEntry {
  return {
    id: row.id,
    time: toNumber(row.time),
    actor: row.actor,
    action: row.action,
    resource: row.resource,
    before: row.before_json === null ? null : (JSON.parse(row.before_json) as unknown),
    after: row.after_json === null ? null : (JSON.parse(row.after_json) as unknown),
  };
}
