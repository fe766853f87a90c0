/** A managed API key as stored: only the SHA-256 hash of the secret is kept. */
export interface ApiKeyRow {
  readonly id: string;
  readonly name: string;
  /** Lower-case hex SHA-256 of the whole key (`sk-gw-...`). */
  readonly keyHash: string;
  /** `sk-gw-…` plus the key's last four characters. */
  readonly redacted: string;
  readonly userPath: string | null;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly expiresAt: number | null;
  readonly deactivatedAt: number | null;
  /** Models the key may ask for; null: every model. */
  readonly allowedModels: readonly string[] | null;
  /** Endpoints (model endpoints, `/mcp`, MCP server names) the key may call; null: all. */
  readonly allowedEndpoints: readonly string[] | null;
  readonly role: ApiKeyRole;
  /** After a rotation: the hash of the replaced secret, accepted until `previousExpiresAt`. */
  readonly previousKeyHash: string | null;
  readonly previousExpiresAt: number | null;
}

export type ApiKeyRole = 'user' | 'viewer' | 'admin';

/** Durable managed keys. Implementations: SQLite and PostgreSQL (src/storage/). */
export interface ApiKeyStore {
  insert(row: ApiKeyRow): Promise<void>;
  /** Every key, active or not, oldest first. */
  list(): Promise<ApiKeyRow[]>;
  /** Sets `deactivatedAt` if it is not set yet; returns the row after the change, or null if unknown. */
  deactivate(id: string, at: number): Promise<ApiKeyRow | null>;
  /** Replaces the row with the same id (every field but id and createdAt); returns it, or null if unknown. */
  update(row: ApiKeyRow): Promise<ApiKeyRow | null>;
}
