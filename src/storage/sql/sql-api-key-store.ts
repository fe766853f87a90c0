import type { ApiKeyRole, ApiKeyRow, ApiKeyStore } from '../../auth/api-keys/api-key-store.ts';
import type { SqlExecutor, SqlValue } from './sql-executor.ts';
import { SqlParameters, toNullableNumber, toNumber } from './sql-executor.ts';

const apiKeyColumns =
  'id, name, key_hash, redacted, user_path, created_at, expires_at, deactivated_at, ' +
  'allowed_models_json, allowed_endpoints_json, role, previous_key_hash, previous_expires_at';

interface ApiKeyTableRow {
  readonly id: string;
  readonly name: string;
  readonly key_hash: string;
  readonly redacted: string;
  readonly user_path: string | null;
  readonly created_at: number | string;
  readonly expires_at: number | string | null;
  readonly deactivated_at: number | string | null;
  readonly allowed_models_json: string | null;
  readonly allowed_endpoints_json: string | null;
  readonly role: string;
  readonly previous_key_hash: string | null;
  readonly previous_expires_at: number | string | null;
}

/** ApiKeyStore over any SQL dialect. A duplicate `keyHash` (or id) rejects the insert. */
export class SqlApiKeyStore implements ApiKeyStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async insert(row: ApiKeyRow): Promise<void> {
    const parameters = new SqlParameters(this.#executor);
    const base: SqlValue[] = [row.id, row.name, row.keyHash, row.redacted, row.userPath, row.createdAt, row.expiresAt, row.deactivatedAt];
    const values = [...base, ...accessValues(row)].map((value) => parameters.add(value)).join(', ');
    await this.#executor.execute(`INSERT INTO api_keys (${apiKeyColumns}) VALUES (${values})`, parameters.values);
  }

  async list(): Promise<ApiKeyRow[]> {
    const rows = await this.#executor.query<ApiKeyTableRow>(`SELECT ${apiKeyColumns} FROM api_keys ORDER BY created_at, id`);
    return rows.map(apiKeyFromRow);
  }

  async deactivate(id: string, at: number): Promise<ApiKeyRow | null> {
    const parameters = new SqlParameters(this.#executor);
    const text = `UPDATE api_keys SET deactivated_at = COALESCE(deactivated_at, ${parameters.add(at)})
      WHERE id = ${parameters.add(id)} RETURNING ${apiKeyColumns}`;
    const rows = await this.#executor.query<ApiKeyTableRow>(text, parameters.values);
    const row = rows[0];
    return row === undefined ? null : apiKeyFromRow(row);
  }

  async update(row: ApiKeyRow): Promise<ApiKeyRow | null> {
    const parameters = new SqlParameters(this.#executor);
    const names = ['name', 'key_hash', 'redacted', 'user_path', 'expires_at', 'deactivated_at'];
    names.push('allowed_models_json', 'allowed_endpoints_json', 'role', 'previous_key_hash', 'previous_expires_at');
    const values = [row.name, row.keyHash, row.redacted, row.userPath, row.expiresAt, row.deactivatedAt, ...accessValues(row)];
    const assignments = names.map((name, index) => `${name} = ${parameters.add(values[index] ?? null)}`).join(', ');
    const text = `UPDATE api_keys SET ${assignments} WHERE id = ${parameters.add(row.id)} RETURNING ${apiKeyColumns}`;
    const rows = await this.#executor.query<ApiKeyTableRow>(text, parameters.values);
    const updated = rows[0];
    return updated === undefined ? null : apiKeyFromRow(updated);
  }
}

/** The access and rotation columns, in `apiKeyColumns` order. */
function accessValues(row: ApiKeyRow): SqlValue[] {
  return [jsonOrNull(row.allowedModels), jsonOrNull(row.allowedEndpoints), row.role, row.previousKeyHash, row.previousExpiresAt];
}

const jsonOrNull = (value: readonly string[] | null): string | null => (value === null ? null : JSON.stringify(value));

function stringList(json: string | null): string[] | null {
  if (json === null) return null;
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : null;
}

const toRole = (value: string): ApiKeyRole => (value === 'viewer' || value === 'admin' ? value : 'user');

function apiKeyFromRow(row: ApiKeyTableRow): ApiKeyRow {
  return {
    id: row.id,
    name: row.name,
    keyHash: row.key_hash,
    redacted: row.redacted,
    userPath: row.user_path,
    createdAt: toNumber(row.created_at),
    expiresAt: toNullableNumber(row.expires_at),
    deactivatedAt: toNullableNumber(row.deactivated_at),
    allowedModels: stringList(row.allowed_models_json),
    allowedEndpoints: stringList(row.allowed_endpoints_json),
    role: toRole(row.role),
    previousKeyHash: row.previous_key_hash,
    previousExpiresAt: toNullableNumber(row.previous_expires_at),
  };
}
