import type { IncomingHttpHeaders } from 'node:http';
import { authenticationError, permissionError } from '../errors/gateway-error.ts';
import { looksLikeJwt } from './jwt/jwt-shape.ts';
import type { JwtVerifier } from './jwt/jwt-verifier.ts';
import { isLoopbackHostHeader } from '../core/loopback.ts';
import type { ApiKeyAuthenticator, Principal } from './principal.ts';

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
 * page the user visits reaches loopback too. A DNS-rebinding page (its own name, re-pointed at
 * 127.0.0.1) sends its own name as `Host`, so open mode serves only a loopback `Host`
 * (`localhost`, `*.localhost`, `127.0.0.0/8`, `[::1]`); and a request whose `Origin` is another
 * site's (a cross-site form POST or WebSocket) is refused. Clients that send no `Origin` (SDKs,
 * curl) and the gateway's own dashboard pass.
 */
function openPrincipalFor(headers: IncomingHttpHeaders): Principal {
  assertLoopbackHost(headers);
  const origin = headers.origin;
  if (origin === undefined || sameHost(origin, headers.host)) return openPrincipal;
  throw permissionError('cross-origin requests are refused while the gateway runs without credentials (set MASTER_KEY)', {
    code: 'cross_origin_refused',
  });
}

function assertLoopbackHost(headers: IncomingHttpHeaders): void {
  if (isLoopbackHostHeader(headers.host)) return;
  throw permissionError(
    'the gateway runs without credentials (open mode) and serves only loopback Host names (localhost, 127.0.0.1, [::1]); set MASTER_KEY to serve other names',
    { code: 'host_not_allowed' },
  );
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

  /** Every route, authenticated or not (/health, /metrics, the dashboard): open mode serves a loopback `Host` only. */
  assertHostServed(headers: IncomingHttpHeaders): void {
    if (this.openMode) assertLoopbackHost(headers);
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
   * For /admin: the master key, or a managed key whose role allows the method (`admin`: every
   * method, `viewer`: GET and HEAD; `user`: none). Only open mode (no credential of any kind)
   * lets a caller without credentials in. Without a master key but with JWT issuers or managed
   * keys, /admin is closed to all but admin-role keys: nothing fails open (ADR 30). JWTs are
   * for model endpoints: one presented here is not a key, so it answers 401.
   */
  authenticateAdmin(headers: IncomingHttpHeaders, method = 'GET'): Principal {
    if (this.openMode) return openPrincipalFor(headers);
    const principal = this.authenticateKey(extractToken(headers));
    if (principal.kind === 'jwt') throw adminRequired();
    // Without a master key, only admin-role keys administer (CONTRACT section 1): viewers too are refused.
    if (this.masterKey === null && principal.role !== 'admin') {
      throw permissionError('without MASTER_KEY, /admin is closed to all but admin-role API keys', { code: 'admin_required' });
    }
    return checkAdminRole(principal, method);
  }

  /** What start-up logs: which routes take which credentials, and what (if anything) is open. */
  describeAccess(): { readonly open: boolean; readonly message: string } {
    if (this.openMode) {
      return {
        open: true,
        message:
          'open mode: no MASTER_KEY, JWT issuer or API key is configured; every route (admin included) is open to callers that reach the gateway under a loopback Host name, until the first API key is created',
      };
    }
    if (this.masterKey !== null)
      return { open: false, message: 'closed: every route needs the master key, an API key or (model endpoints) a JWT' };
    const mechanisms = [this.jwt === null ? null : 'JWT issuers', this.apiKeys?.hasKeys() === true ? 'API keys' : null].filter(Boolean);
    return {
      open: false,
      message: `no MASTER_KEY is set but ${mechanisms.join(' and ')} are configured: model endpoints need a credential, and /admin is closed to all but admin-role API keys`,
    };
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
