import type { ApiKeyRow, ApiKeyStore } from '../../keys/api-key-store.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlParameters, toNullableNumber, toNumber } from './sql-executor.ts';

const apiKeyColumns = 'id, name, key_hash, redacted, user_path, created_at, expires_at, deactivated_at';

interface ApiKeyTableRow {
  readonly id: string;
  readonly name: string;
  readonly key_hash: string;
  readonly redacted: string;
  readonly user_path: string | null;
  readonly created_at: number | string;
  readonly expires_at: number | string | null;
  readonly deactivated_at: number | string | null;
}

/** ApiKeyStore over any SQL dialect. A duplicate `keyHash` (or id) rejects the insert. */
export class SqlApiKeyStore implements ApiKeyStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async insert(row: ApiKeyRow): Promise<void> {
    const parameters = new SqlParameters(this.#executor);
    const values = [row.id, row.name, row.keyHash, row.redacted, row.userPath, row.createdAt, row.expiresAt, row.deactivatedAt]
      .map((value) => parameters.add(value))
      .join(', ');
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
}

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
  };
}
