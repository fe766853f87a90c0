import { hash, randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { notFound } from '../errors/gateway-error.ts';
import type { ApiKeyAuthenticator, Principal } from '../http/auth.ts';
import type { ApiKeyRow, ApiKeyStore } from './api-key-store.ts';

export const apiKeyPrefix = 'sk-gw-';

export interface NewApiKey {
  name: string;
  userPath: string | null;
  expiresAt: number | null;
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
  /** Bumped by every local write, so a reload that read the store before it is dropped. */
  private writes = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(options: ApiKeyServiceOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(
      () => void this.reload().catch((error: unknown) => this.options.logger.warn({ err: error }, 'API key reload failed')),
      this.options.refreshIntervalMs,
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
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
    const row = this.byHash.get(hashApiKey(token));
    if (row === undefined || !isActive(row, this.now())) return null;
    return { kind: 'api_key', keyId: row.id, boundUserPath: row.userPath };
  }

  /** Creates a key; the plaintext is returned here and never again. */
  async create(request: NewApiKey): Promise<{ row: ApiKeyRow; key: string }> {
    const key = `${apiKeyPrefix}${randomBytes(32).toString('base64url')}`;
    const row: ApiKeyRow = {
      id: randomUUID(),
      name: request.name,
      keyHash: hashApiKey(key),
      redacted: `${apiKeyPrefix}…${key.slice(-4)}`,
      userPath: request.userPath,
      createdAt: this.now(),
      expiresAt: request.expiresAt,
      deactivatedAt: null,
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

  isActive(row: ApiKeyRow): boolean {
    return isActive(row, this.now());
  }

  private async reload(): Promise<void> {
    const writesBefore = this.writes;
    const rows = await this.options.store.list();
    if (this.writes !== writesBefore) return;
    this.byHash = new Map(rows.map((row) => [row.keyHash, row]));
  }

  private remember(row: ApiKeyRow): void {
    this.writes += 1;
    this.byHash.set(row.keyHash, row);
  }
}

function isActive(row: ApiKeyRow, now: number): boolean {
  return row.deactivatedAt === null && (row.expiresAt === null || row.expiresAt > now);
}
