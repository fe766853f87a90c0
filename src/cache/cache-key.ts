import { createHash } from 'node:crypto';

/**
 * Bumped when the key derivation changes, so entries written by an older gateway into a
 * shared store (Redis) are never read under a new meaning.
 */
const keyFormat = 'response-cache/v1';

/** The request body field that only steers routing; the resolved target already carries it. */
const routingHintField = 'provider';

/**
 * Whose requests share cache entries (`response_cache.scope`): `user_path` (the default) the
 * requests of one user path (case-insensitively, as limits and budgets match it), `key` those
 * of one credential (managed key, JWT subject, the master key), `global` everyone's (opt-in).
 */
export type ResponseCacheScope = 'user_path' | 'key' | 'global';

export interface ResponseCacheKeyInput {
  /** The request path, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** The resolved target, e.g. `openai/gpt-4o` or `virtual:my-alias`. */
  readonly target: string;
  /** The decoded JSON request body. */
  readonly body: unknown;
  /** The caller's share of the cache (`cacheScopeOf`); absent or null: shared by everyone. */
  readonly scope?: string | null;
}

/**
 * The exact-match cache key: hex SHA-256 over the key format, the path, the target, the
 * canonical body (object keys sorted recursively, array order kept, the top-level
 * `provider` routing hint removed) and the caller's scope. `stream` stays in the body, so
 * streaming and non-streaming requests are cached apart. A global key is what it was before
 * scopes existed; a scoped one has one more member, so the two never meet.
 */
export function responseCacheKey(input: ResponseCacheKeyInput): string {
  const members = [keyFormat, input.path, input.target, withoutRoutingHint(input.body)];
  if (input.scope !== undefined && input.scope !== null) members.push(input.scope);
  return createHash('sha256').update(canonicalJson(members), 'utf8').digest('hex');
}

/** Who sends a request, as far as the cache scope reads it (a request context fits). */
export interface CacheCaller {
  readonly userPath: string;
  readonly principal: {
    readonly kind: string;
    readonly keyId: string | null;
    readonly subject?: string | null;
    readonly issuer?: string | null;
  };
}

/** The caller as the scope sees it: its user path, its credential, or nobody in particular (`global`). */
export function cacheScopeOf(scope: ResponseCacheScope, caller: CacheCaller): string | null {
  if (scope === 'global') return null;
  if (scope === 'user_path') return `user_path:${caller.userPath.toLowerCase()}`;
  const { principal } = caller;
  // A subject is unique within its issuer only: two issuers' `alice` are two credentials.
  if (principal.kind === 'jwt') return `jwt:${JSON.stringify([principal.issuer ?? '', principal.subject ?? ''])}`;
  return `${principal.kind}:${principal.keyId ?? ''}`;
}

/**
 * JSON with every object's keys in sorted order (by UTF-16 code units, like
 * `Array.prototype.sort`), otherwise as `JSON.stringify` writes it: properties whose value
 * is undefined, a function or a symbol are left out, and those values become `null` inside
 * arrays.
 */
export function canonicalJson(value: unknown): string {
  return writeCanonical(value) ?? 'null';
}

function writeCanonical(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => writeCanonical(item) ?? 'null').join(',')}]`;
  }
  if (isPlainRecord(value)) {
    const members: string[] = [];
    for (const name of Object.keys(value).sort()) {
      const written = writeCanonical(value[name]);
      if (written !== undefined) members.push(`${JSON.stringify(name)}:${written}`);
    }
    return `{${members.join(',')}}`;
  }
  // Primitives (and objects with toJSON, such as Date) take JSON.stringify's own form.
  const written: string | undefined = JSON.stringify(value);
  return written;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function withoutRoutingHint(body: unknown): unknown {
  if (!isPlainRecord(body) || !Object.hasOwn(body, routingHintField)) return body;
  const { [routingHintField]: _hint, ...rest } = body;
  return rest;
}

export interface CacheDirectives {
  /** `Cache-Control: no-cache`: do not answer from the cache. */
  readonly noCache: boolean;
  /** `Cache-Control: no-store`: do not answer from the cache and do not store the response. */
  readonly noStore: boolean;
}

/** Request headers as Node and Fastify hand them over (names usually lower-case already). */
export type RequestHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Reads the `Cache-Control` request header: every header value and every comma-separated
 * directive in it, names compared case-insensitively, arguments ignored, commas inside
 * quoted arguments not taken as separators.
 */
export function cacheDirectives(headers: RequestHeaders): CacheDirectives {
  let noCache = false;
  let noStore = false;
  for (const directive of cacheControlDirectiveNames(headers)) {
    if (directive === 'no-cache') noCache = true;
    else if (directive === 'no-store') noStore = true;
  }
  return { noCache, noStore };
}

function cacheControlDirectiveNames(headers: RequestHeaders): string[] {
  const names: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.toLowerCase() !== 'cache-control') continue;
    const values: readonly string[] = typeof value === 'string' ? [value] : value;
    for (const headerValue of values) {
      for (const directive of splitOutsideQuotes(headerValue)) {
        const directiveName = directive.split('=', 1)[0]?.trim().toLowerCase() ?? '';
        if (directiveName !== '') names.push(directiveName);
      }
    }
  }
  return names;
}

function splitOutsideQuotes(headerValue: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let index = 0; index < headerValue.length; index += 1) {
    const character = headerValue[index] ?? '';
    if (character === '\\' && quoted) {
      current += character + (headerValue[index + 1] ?? '');
      index += 1;
    } else if (character === '"') {
      quoted = !quoted;
      current += character;
    } else if (character === ',' && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  parts.push(current);
  return parts;
}
