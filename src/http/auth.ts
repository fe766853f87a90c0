import type { IncomingHttpHeaders } from 'node:http';
import { isGeminiDialectUrl } from '../dialects/gemini/errors.ts';
import { authenticationError, permissionError } from '../errors/gateway-error.ts';
import { looksLikeJwt } from '../auth/jwt-shape.ts';
import type { JwtVerifier } from '../auth/jwt-verifier.ts';

export interface Principal {
  /** `open`: no credentials are configured; `master`: the master key; `api_key`: a managed key; `jwt`: a trusted issuer's token. */
  readonly kind: 'open' | 'master' | 'api_key' | 'jwt';
  readonly keyId: string | null;
  /** The user path a managed key is bound to (or a JWT's claim template gives); it always wins over the header. */
  readonly boundUserPath: string | null;
  /** What the caller may ask for: concrete selectors, virtual model names, `<instance>/*`; absent or null: anything. */
  readonly allowedModels?: readonly string[] | null;
  /** Model endpoints, `/mcp` and MCP server names the caller may call; absent or null: all of them. */
  readonly allowedEndpoints?: readonly string[] | null;
  /** `user`: model endpoints and `/mcp`; `viewer`: also GET on `/admin`; `admin`: everything. Absent: by kind. */
  readonly role?: 'user' | 'viewer' | 'admin';
  /** A JWT's subject (`sub`), recorded where a key id would be. */
  readonly subject?: string | null;
}

/** The seam for managed API keys: looks a presented token up. */
export interface ApiKeyAuthenticator {
  /** Whether any managed key exists (if none and no master key, the gateway is open). */
  hasKeys(): boolean;
  authenticate(token: string): Principal | null;
}

const openPrincipal: Principal = Object.freeze({ kind: 'open', keyId: null, boundUserPath: null });
const masterPrincipal: Principal = Object.freeze({ kind: 'master', keyId: null, boundUserPath: null });

/**
 * Whether `token` is `secret`, in a time that depends on the token's length only: every
 * character of the token is compared with the secret's (repeated over the token's length)
 * and the differences are OR-ed, without a branch, so neither how much of a guess matches nor
 * the secret's length shows in the time. A SHA-256 of each token (then `timingSafeEqual` on the
 * digests) hid the same and cost about 1.5 µs a request (ADR 12).
 */
export function constantTimeEquals(token: string, secret: string): boolean {
  const period = secret.length;
  if (period === 0) return false;
  let difference = token.length ^ period;
  for (let index = 0; index < token.length; index += 1) {
    difference |= token.charCodeAt(index) ^ secret.charCodeAt(index % period);
  }
  return difference === 0;
}

/**
 * Without credentials the gateway trusts whoever reaches it (loopback by default), but a web
 * page the user visits reaches loopback too: a cross-site form POST or WebSocket would spend
 * the provider keys. So in open mode a request whose `Origin` is another site's is refused;
 * clients that send no `Origin` (SDKs, curl) and the gateway's own dashboard pass.
 */
function openPrincipalFor(headers: IncomingHttpHeaders): Principal {
  const origin = headers.origin;
  if (origin === undefined || sameHost(origin, headers.host)) return openPrincipal;
  throw permissionError('cross-origin requests are refused while the gateway runs without credentials (set MASTER_KEY)', {
    code: 'cross_origin_refused',
  });
}

function sameHost(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * Authenticates requests (CONTRACT section 3). The master key is compared in constant time,
 * its length hidden too (`constantTimeEquals`).
 */
export class Authenticator {
  private readonly masterKey: string | null;
  private readonly apiKeys: ApiKeyAuthenticator | null;
  private readonly jwt: JwtVerifier | null;

  constructor(masterKey: string | null, apiKeys: ApiKeyAuthenticator | null = null, jwt: JwtVerifier | null = null) {
    this.masterKey = masterKey;
    this.apiKeys = apiKeys;
    this.jwt = jwt !== null && jwt.enabled ? jwt : null;
  }

  get openMode(): boolean {
    return this.masterKey === null && this.jwt === null && !(this.apiKeys?.hasKeys() ?? false);
  }

  /**
   * For model endpoints and /mcp: the master key, a trusted issuer's JWT or an active managed
   * key. A JWT seen before answers from the verdict cache at once; a new one is verified (async).
   */
  authenticateRequest(headers: IncomingHttpHeaders): Principal | Promise<Principal> {
    if (this.openMode) return openPrincipalFor(headers);
    const token = extractToken(headers);
    if (this.jwt !== null && looksLikeJwt(token)) {
      // A master key that happens to contain two dots still works.
      return this.jwt.cached(token) ?? (this.isMasterKey(token) ? masterPrincipal : this.jwt.verify(token));
    }
    return this.authenticateKey(token);
  }

  /** The master key or an active managed key (no JWT). */
  authenticate(headers: IncomingHttpHeaders): Principal {
    if (this.openMode) return openPrincipalFor(headers);
    return this.authenticateKey(extractToken(headers));
  }

  private authenticateKey(token: string): Principal {
    if (this.isMasterKey(token)) return masterPrincipal;
    const principal = this.apiKeys?.authenticate(token) ?? null;
    if (principal === null) throw authenticationError('invalid credentials', { code: 'invalid_credentials', headers: bearerChallenge() });
    return principal;
  }

  /**
   * For /admin: the master key, or a credential whose role allows the method (`admin`: every method,
   * `viewer`: GET and HEAD; `user`: none). Without a master key the admin API stays reachable
   * (the gateway then binds loopback unless HOST says otherwise), but a presented credential
   * must still be valid and its role must allow the call.
   */
  authenticateAdmin(headers: IncomingHttpHeaders, method = 'GET'): Principal {
    if (this.masterKey === null) {
      // No master key: the admin API is open (loopback by default), but a credential that is
      // presented must be valid, and a managed key is still refused.
      const presented =
        headers.authorization !== undefined || headers['x-api-key'] !== undefined || headers['x-goog-api-key'] !== undefined;
      if (!presented || this.openMode) return openPrincipalFor(headers);
      const principal = this.apiKeys?.authenticate(extractToken(headers)) ?? null;
      if (principal === null) throw authenticationError('invalid credentials', { code: 'invalid_credentials', headers: bearerChallenge() });
      return checkAdminRole(principal, method);
    }
    // JWTs are for model endpoints: one presented here is not the master key, so it is refused.
    const principal = this.authenticate(headers);
    if (principal.kind === 'jwt') throw adminRequired();
    return checkAdminRole(principal, method);
  }

  private isMasterKey(token: string): boolean {
    return this.masterKey !== null && constantTimeEquals(token, this.masterKey);
  }
}

/** `Authorization: Bearer <token>`, else `x-api-key: <token>`, else Google's `x-goog-api-key: <token>`. */
export function extractToken(headers: IncomingHttpHeaders): string {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!match?.[1]) {
      throw authenticationError("invalid Authorization header: expected 'Bearer <token>'", {
        code: 'invalid_credentials',
        headers: bearerChallenge(),
      });
    }
    return match[1];
  }
  const apiKey = headers['x-api-key'] ?? headers['x-goog-api-key'];
  const token = Array.isArray(apiKey) ? apiKey[0] : apiKey;
  if (token === undefined || token.trim() === '') {
    throw authenticationError("missing credentials: send 'Authorization: Bearer <token>' or 'x-api-key: <token>'", {
      code: 'missing_credentials',
      headers: bearerChallenge(),
    });
  }
  return token.trim();
}

/**
 * RFC 9110 section 11.6.1: a 401 names its scheme. A plain `Bearer` (no `resource_metadata`) tells MCP
 * clients that a key is missing or wrong, not that an OAuth flow should start.
 */
function bearerChallenge(): Record<string, string> {
  return { 'WWW-Authenticate': 'Bearer' };
}

/** The master key (and open mode) may do anything; other credentials by their role. */
function checkAdminRole(principal: Principal, method: string): Principal {
  if (principal.kind === 'master' || principal.kind === 'open') return principal;
  if (principal.role === 'admin') return principal;
  if (principal.role === 'viewer' && (method === 'GET' || method === 'HEAD')) return principal;
  if (principal.role === 'viewer')
    throw permissionError('this key has the viewer role: it may only read /admin (GET)', { code: 'admin_required' });
  throw adminRequired();
}

function adminRequired() {
  return permissionError('admin routes need the master key or a key with the admin (or, for GET, viewer) role', { code: 'admin_required' });
}

/**
 * Google's clients may send the key in the query (`?key=<token>`) instead of `x-goog-api-key`:
 * accepted on the Gemini dialect's routes only, when no credential header is present.
 */
export function withGoogleQueryKey(headers: IncomingHttpHeaders, url: string): IncomingHttpHeaders {
  if (headers.authorization !== undefined || headers['x-api-key'] !== undefined || headers['x-goog-api-key'] !== undefined) return headers;
  const query = url.indexOf('?');
  if (query === -1 || !isGeminiDialectUrl(url)) return headers;
  const key = new URLSearchParams(url.slice(query + 1)).get('key');
  return key === null || key === '' ? headers : { ...headers, 'x-goog-api-key': key };
}
