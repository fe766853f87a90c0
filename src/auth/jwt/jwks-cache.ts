import { createLocalJWKSet, errors, type JSONWebKeySet, type JWSHeaderParameters, type FlattenedJWSInput } from 'jose';
import { authenticationError } from '../../errors/gateway-error.ts';

export interface WarnLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface JwksCacheOptions {
  readonly url: string;
  readonly issuer: string;
  /** An unknown `kid` refetches at most once per this interval. */
  readonly cooldownMs: number;
  /** Keys older than this are refetched; if that fails they keep working. */
  readonly maxAgeMs: number;
  readonly logger: WarnLogger;
  readonly timeoutMs?: number;
  readonly now?: () => number;
}

type KeyLookup = ReturnType<typeof createLocalJWKSet>;
export type KeyResolver = (header: JWSHeaderParameters, token: FlattenedJWSInput) => ReturnType<KeyLookup>;

const maxJwksBytes = 1024 * 1024;

/**
 * An issuer's signing keys fetched from its JWKS URL. Keys are cached; they are refetched when
 * older than `maxAgeMs` or when a token names an unknown `kid` (at most once per `cooldownMs`,
 * so a flood of made-up kids cannot hammer the identity provider). While the endpoint is down
 * the cached keys keep working; with none cached the token is refused with a clear message.
 */
export class JwksCache {
  private lookup: KeyLookup | null = null;
  private fetchedAt = 0;
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> | null = null;
  private readonly now: () => number;
  private readonly options: JwksCacheOptions;

  constructor(options: JwksCacheOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  /** The key resolver `jwtVerify` calls. */
  readonly resolve: KeyResolver = async (header, token) => {
    if (this.lookup === null || this.now() - this.fetchedAt >= this.options.maxAgeMs) await this.refresh();
    const lookup = this.lookup;
    if (lookup === null) throw keysUnavailable(this.options.issuer);
    try {
      return await lookup(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || this.now() - this.attemptedAt < this.options.cooldownMs) throw error;
      await this.refresh();
      return (this.lookup ?? lookup)(header, token);
    }
  };

  /** One fetch at a time, at most once per cooldown; failures keep the cached keys and log a warning. */
  private async refresh(): Promise<void> {
    if (this.pending !== null) return this.pending;
    if (this.now() - this.attemptedAt < this.options.cooldownMs) return;
    this.attemptedAt = this.now();
    this.pending = this.fetchKeys()
      .then((jwks) => {
        this.lookup = createLocalJWKSet(jwks);
        this.fetchedAt = this.now();
      })
      .catch((error: unknown) => {
        this.options.logger.warn(
          { issuer: this.options.issuer, jwks_url: this.options.url, cached_keys: this.lookup !== null, reason: reasonOf(error) },
          this.lookup === null
            ? 'JWKS endpoint unreachable and no keys cached: tokens of this issuer are refused'
            : 'JWKS refresh failed: the cached keys stay in use',
        );
      })
      .finally(() => {
        this.pending = null;
      });
    return this.pending;
  }

  private async fetchKeys(): Promise<JSONWebKeySet> {
    const timeoutMs = this.options.timeoutMs ?? 5000;
    // undici's index (fetch, WebSocket, ...) is loaded only when a JWKS is fetched (ADR 16).
    const { request } = await import('../../lazy/undici-request.ts');
    const response = await request(this.options.url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new Error(`status ${response.statusCode}`);
    }
    const text = await readBounded(response.body);
    const document: unknown = JSON.parse(text);
    if (typeof document !== 'object' || document === null || !Array.isArray((document as { keys?: unknown }).keys)) {
      throw new Error('the answer is not a JWKS (no "keys" array)');
    }
    return document as JSONWebKeySet;
  }
}

async function readBounded(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxJwksBytes) throw new Error('the JWKS is larger than 1 MiB');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function keysUnavailable(issuer: string) {
  return authenticationError(`the signing keys of issuer ${issuer} cannot be fetched right now; try again later`, {
    code: 'invalid_token',
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
  });
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
