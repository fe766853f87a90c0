import { hash, randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { StoreReread } from '../../core/store-reread.ts';
import { notFound } from '../../errors/gateway-error.ts';
import type { ApiKeyAuthenticator, Principal } from '../principal.ts';
import type { ApiKeyRole, ApiKeyRow, ApiKeyStore } from './api-key-store.ts';

export const apiKeyPrefix = 'sk-gw-';

export interface NewApiKey {
  name: string;
  userPath: string | null;
  expiresAt: number | null;
  allowedModels?: readonly string[] | null;
  allowedEndpoints?: readonly string[] | null;
  role?: ApiKeyRole;
}

/** What `PATCH /admin/api-keys/{id}` may change; absent fields stay. */
export interface ApiKeyChanges {
  name?: string;
  allowedModels?: readonly string[] | null;
  allowedEndpoints?: readonly string[] | null;
  role?: ApiKeyRole;
}

export interface ApiKeyServiceOptions {
  store: ApiKeyStore;
  /** How often the key list is re-read, so keys changed by another replica take effect. */
  refreshIntervalMs: number;
  logger: Logger;
  now?: () => number;
}

export const hashApiKey = (key: string): string => hash('sha256', key, 'hex');

/**
 * Managed API keys (CONTRACT section 3): `sk-gw-` + 43 base64url characters, shown once;
 * only the SHA-256 hash is stored. Lookups hit an in-memory map keyed by hash.
 */
export class ApiKeyService implements ApiKeyAuthenticator {
  private readonly options: ApiKeyServiceOptions;
  private readonly now: () => number;
  private byHash = new Map<string, ApiKeyRow>();
  private readonly rereads: StoreReread<ApiKeyRow[]>;

  constructor(options: ApiKeyServiceOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.rereads = new StoreReread({
      read: () => options.store.list(),
      apply: (rows) => this.applyStored(rows),
      failed: (error) => options.logger.warn({ err: error }, 'API key reload failed'),
    });
  }

  async start(): Promise<void> {
    await this.reload();
    this.rereads.every(this.options.refreshIntervalMs);
  }

  stop(): void {
    this.rereads.stop();
  }

  /**
   * Whether any key was ever created. Deactivated and expired keys count too: a gateway that
   * issued keys never falls back to open mode because they lapsed.
   */
  hasKeys(): boolean {
    return this.byHash.size > 0;
  }

  authenticate(token: string): Principal | null {
    if (!token.startsWith(apiKeyPrefix)) return null;
    const digest = hashApiKey(token);
    const row = this.byHash.get(digest);
    const now = this.now();
    if (row === undefined || !isActive(row, now)) return null;
    // A rotated-out secret works until its grace ends.
    if (row.keyHash !== digest && (row.previousKeyHash !== digest || (row.previousExpiresAt ?? 0) <= now)) return null;
    return {
      kind: 'api_key',
      keyId: row.id,
      boundUserPath: row.userPath,
      allowedModels: row.allowedModels,
      allowedEndpoints: row.allowedEndpoints,
      role: row.role,
    };
  }

  /** Creates a key; the plaintext is returned here and never again. */
  async create(request: NewApiKey): Promise<{ row: ApiKeyRow; key: string }> {
    const key = newSecret();
    const row: ApiKeyRow = {
      id: randomUUID(),
      name: request.name,
      keyHash: hashApiKey(key),
      redacted: redact(key),
      userPath: request.userPath,
      createdAt: this.now(),
      expiresAt: request.expiresAt,
      deactivatedAt: null,
      allowedModels: request.allowedModels ?? null,
      allowedEndpoints: request.allowedEndpoints ?? null,
      role: request.role ?? 'user',
      previousKeyHash: null,
      previousExpiresAt: null,
    };
    await this.options.store.insert(row);
    this.remember(row);
    return { row, key };
  }

  list(): Promise<ApiKeyRow[]> {
    return this.options.store.list();
  }

  async deactivate(id: string): Promise<ApiKeyRow> {
    const row = await this.options.store.deactivate(id, this.now());
    if (row === null) throw notFound(`no API key with id ${id}`, { code: 'api_key_not_found' });
    this.remember(row);
    return row;
  }

  async update(id: string, changes: ApiKeyChanges): Promise<ApiKeyRow> {
    const row = await this.find(id);
    return this.save(row, {
      ...row,
      name: changes.name ?? row.name,
      allowedModels: changes.allowedModels === undefined ? row.allowedModels : changes.allowedModels,
      allowedEndpoints: changes.allowedEndpoints === undefined ? row.allowedEndpoints : changes.allowedEndpoints,
      role: changes.role ?? row.role,
    });
  }

  /** A new secret for the key; the current one keeps working for `graceSeconds`. */
  async rotate(id: string, graceSeconds: number): Promise<{ row: ApiKeyRow; key: string }> {
    const row = await this.find(id);
    if (!isActive(row, this.now())) throw notFound(`API key ${id} is not active`, { code: 'api_key_not_found' });
    const key = newSecret();
    const grace = graceSeconds > 0;
    const rotated = await this.save(row, {
      ...row,
      keyHash: hashApiKey(key),
      redacted: redact(key),
      previousKeyHash: grace ? row.keyHash : null,
      previousExpiresAt: grace ? this.now() + graceSeconds * 1000 : null,
    });
    return { row: rotated, key };
  }

  isActive(row: ApiKeyRow): boolean {
    return isActive(row, this.now());
  }

  private async find(id: string): Promise<ApiKeyRow> {
    const row = (await this.options.store.list()).find((candidate) => candidate.id === id);
    if (row === undefined) throw notFound(`no API key with id ${id}`, { code: 'api_key_not_found' });
    return row;
  }

  private async save(current: ApiKeyRow, next: ApiKeyRow): Promise<ApiKeyRow> {
    const saved = await this.options.store.update(next);
    if (saved === null) throw notFound(`no API key with id ${next.id}`, { code: 'api_key_not_found' });
    this.forget(current);
    this.remember(saved);
    return saved;
  }

  /** Re-reads the keys (written through another replica or worker), after any read in progress. */
  reload(): Promise<void> {
    return this.rereads.run();
  }

  private applyStored(rows: readonly ApiKeyRow[]): void {
    const byHash = new Map<string, ApiKeyRow>();
    for (const row of rows) {
      byHash.set(row.keyHash, row);
      if (row.previousKeyHash !== null) byHash.set(row.previousKeyHash, row);
    }
    this.byHash = byHash;
  }

  private remember(row: ApiKeyRow): void {
    this.rereads.wrote();
    this.byHash.set(row.keyHash, row);
    if (row.previousKeyHash !== null) this.byHash.set(row.previousKeyHash, row);
  }

  private forget(row: ApiKeyRow): void {
    this.byHash.delete(row.keyHash);
    if (row.previousKeyHash !== null) this.byHash.delete(row.previousKeyHash);
  }
}

const newSecret = (): string => `${apiKeyPrefix}${randomBytes(32).toString('base64url')}`;
const redact = (key: string): string => `${apiKeyPrefix}…${key.slice(-4)}`;

function isActive(row: ApiKeyRow, now: number): boolean {
  return row.deactivatedAt === null && (row.expiresAt === null || row.expiresAt > now);
}
