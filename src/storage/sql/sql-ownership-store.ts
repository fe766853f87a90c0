import type { OwnedKind, OwnedPageQuery, OwnedResource, OwnershipStore } from '../../ownership/ownership-store.ts';
import type { SqlExecutor, SqlValue } from './sql-executor.ts';
import { SqlParameters, toBoolean, toNumber } from './sql-executor.ts';
import { userPathSubtreeCondition } from './user-path-subtree.ts';

const columns = ['kind', 'instance', 'id', 'user_path', 'user_path_lower', 'key_id', 'created_at', 'charged'] as const;
const selected = 'kind, instance, id, user_path, key_id, created_at, charged';
/** Ids per statement in findMany (well under either database's parameter limit). */
const idsPerStatement = 500;

interface OwnerRow {
  readonly kind: string;
  readonly instance: string;
  readonly id: string;
  readonly user_path: string;
  readonly key_id: string | null;
  readonly created_at: number | string;
  readonly charged: boolean | number;
}

/** OwnershipStore over any SQL dialect (table `owned_resources`, migration 16). */
export class SqlOwnershipStore implements OwnershipStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  record(resource: OwnedResource): Promise<void> {
    return this.recordMany([resource]);
  }

  async recordMany(resources: readonly OwnedResource[]): Promise<void> {
    if (resources.length === 0) return;
    const parameters = new SqlParameters(this.#executor);
    const rows = resources.map(
      (resource) =>
        `(${rowOf(resource, this.#executor.dialect)
          .map((value) => parameters.add(value))
          .join(', ')})`,
    );
    await this.#executor.execute(
      `INSERT INTO owned_resources (${columns.join(', ')}) VALUES ${rows.join(', ')} ON CONFLICT (kind, instance, id) DO NOTHING`,
      parameters.values,
    );
  }

  async find(kind: OwnedKind, instance: string, id: string): Promise<OwnedResource | null> {
    const [found] = await this.findMany(kind, instance, [id]);
    return found ?? null;
  }

  async findMany(kind: OwnedKind, instance: string, ids: readonly string[]): Promise<OwnedResource[]> {
    const found: OwnedResource[] = [];
    for (let start = 0; start < ids.length; start += idsPerStatement) {
      const parameters = new SqlParameters(this.#executor);
      // Parameters in text order: SQLite's `?` are positional.
      const where = `kind = ${parameters.add(kind)} AND instance = ${parameters.add(instance)}`;
      const list = ids
        .slice(start, start + idsPerStatement)
        .map((id) => parameters.add(id))
        .join(', ');
      const rows = await this.#executor.query<OwnerRow>(
        `SELECT ${selected} FROM owned_resources WHERE ${where} AND id IN (${list})`,
        parameters.values,
      );
      found.push(...rows.map(resourceOf));
    }
    return found;
  }

  async list(query: OwnedPageQuery): Promise<OwnedResource[]> {
    const parameters = new SqlParameters(this.#executor);
    const conditions = [`kind = ${parameters.add(query.kind)}`, `instance = ${parameters.add(query.instance)}`];
    if (query.visibleTo !== null) {
      const subtree = userPathSubtreeCondition(query.visibleTo, parameters);
      if (subtree !== null) conditions.push(subtree);
    }
    if (query.after !== undefined) {
      const after = await this.find(query.kind, query.instance, query.after);
      if (after === null) return [];
      const at = parameters.add(after.createdAt);
      conditions.push(`(created_at < ${at} OR (created_at = ${parameters.add(after.createdAt)} AND id < ${parameters.add(after.id)}))`);
    }
    const rows = await this.#executor.query<OwnerRow>(
      `SELECT ${selected} FROM owned_resources WHERE ${conditions.join(' AND ')}
        ORDER BY created_at DESC, id DESC LIMIT ${parameters.add(Math.max(0, Math.floor(query.limit)))}`,
      parameters.values,
    );
    return rows.map(resourceOf);
  }

  async markCharged(kind: OwnedKind, instance: string, id: string): Promise<boolean> {
    const parameters = new SqlParameters(this.#executor);
    const charged = this.#executor.dialect === 'postgresql' ? 'TRUE' : '1';
    const uncharged = this.#executor.dialect === 'postgresql' ? 'FALSE' : '0';
    const changed = await this.#executor.execute(
      `UPDATE owned_resources SET charged = ${charged}
        WHERE kind = ${parameters.add(kind)} AND instance = ${parameters.add(instance)} AND id = ${parameters.add(id)} AND charged = ${uncharged}`,
      parameters.values,
    );
    return changed > 0;
  }

  async delete(kind: OwnedKind, instance: string, id: string): Promise<boolean> {
    const parameters = new SqlParameters(this.#executor);
    const deleted = await this.#executor.execute(
      `DELETE FROM owned_resources WHERE kind = ${parameters.add(kind)} AND instance = ${parameters.add(instance)} AND id = ${parameters.add(id)}`,
      parameters.values,
    );
    return deleted > 0;
  }
}

function rowOf(resource: OwnedResource, dialect: SqlExecutor['dialect']): SqlValue[] {
  const charged = dialect === 'postgresql' ? resource.charged : resource.charged ? 1 : 0;
  return [
    resource.kind,
    resource.instance,
    resource.id,
    resource.userPath,
    resource.userPath.toLowerCase(),
    resource.keyId,
    resource.createdAt,
    charged,
  ];
}

function resourceOf(row: OwnerRow): OwnedResource {
  return {
    kind: row.kind as OwnedKind,
    instance: row.instance,
    id: row.id,
    userPath: row.user_path,
    keyId: row.key_id,
    createdAt: toNumber(row.created_at),
    charged: toBoolean(row.charged),
  };
}
