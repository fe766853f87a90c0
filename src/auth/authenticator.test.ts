import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.ts';
import { Authenticator, constantTimeEquals, extractToken } from './authenticator.ts';
import { withGoogleQueryKey } from '../http/google-query-key.ts';
import type { ApiKeyAuthenticator } from './principal.ts';
import { thrown } from '../testing/thrown.ts';
import type { JwtVerifier } from './jwt/jwt-verifier.ts';

describe('constantTimeEquals', () => {
  it('is true for the secret only: not a prefix, an extension, a repetition or a one-character change', () => {
    const secret = 'master-key-123';
    expect(constantTimeEquals(secret, secret)).toBe(true);
    expect(constantTimeEquals(`${secret}`.slice(0), secret)).toBe(true);
    for (const guess of ['master-key-12', 'master-key-1234', secret + secret, 'master-key-124', 'Master-key-123', 'x', '']) {
      expect(constantTimeEquals(guess, secret)).toBe(false);
    }
    expect(constantTimeEquals('anything', '')).toBe(false);
    expect(constantTimeEquals('é-key', 'é-key')).toBe(true);
    expect(constantTimeEquals('e-key', 'é-key')).toBe(false);
  });
});

describe('extractToken', () => {
  it('reads a bearer token, case-insensitively on the scheme', () => {
    expect(extractToken({ authorization: 'Bearer abc' })).toBe('abc');
    expect(extractToken({ authorization: 'bearer abc' })).toBe('abc');
  });

  it('falls back to x-api-key only without an Authorization header', () => {
    expect(extractToken({ 'x-api-key': 'k' })).toBe('k');
    expect(thrown(GatewayError, () => extractToken({ authorization: 'Basic Zm9v', 'x-api-key': 'k' })).code).toBe('invalid_credentials');
  });

  it("reads Google's x-goog-api-key, and ?key= on the Gemini dialect's routes only", () => {
    expect(extractToken({ 'x-goog-api-key': 'g' })).toBe('g');
    expect(extractToken(withGoogleQueryKey({}, '/v1beta/models/m:generateContent?alt=sse&key=q'))).toBe('q');
    expect(extractToken(withGoogleQueryKey({ 'x-goog-api-key': 'g' }, '/v1beta/models/m:generateContent?key=q'))).toBe('g');
    expect(withGoogleQueryKey({}, '/v1/chat/completions?key=q')).toEqual({});
  });

  it('reports missing credentials', () => {
    const error = thrown(GatewayError, () => extractToken({}));
    expect(error.status).toBe(401);
    expect(error.code).toBe('missing_credentials');
  });
});

describe('Authenticator', () => {
  it('is open with no master key and no managed keys', () => {
    const authenticator = new Authenticator(null);
    expect(authenticator.openMode).toBe(true);
    expect(authenticator.authenticate({ host: '127.0.0.1:8080' }).kind).toBe('open');
  });

  it('accepts the master key and refuses anything else', () => {
    const authenticator = new Authenticator('secret-master');
    expect(authenticator.authenticate({ authorization: 'Bearer secret-master' }).kind).toBe('master');
    expect(thrown(GatewayError, () => authenticator.authenticate({ authorization: 'Bearer secret-maste' })).status).toBe(401);
    expect(thrown(GatewayError, () => authenticator.authenticate({ authorization: 'Bearer secret-master-and-more' })).status).toBe(401);
    expect(thrown(GatewayError, () => authenticator.authenticate({})).status).toBe(401);
  });

  it('authenticates managed keys through the seam and keeps them out of admin routes', () => {
    const keys: ApiKeyAuthenticator = {
      hasKeys: () => true,
      authenticate: (token) => (token === 'sk-gw-good' ? { kind: 'api_key', keyId: 'k1', boundUserPath: '/team/a' } : null),
    };
    const authenticator = new Authenticator(null, keys);
    expect(authenticator.openMode).toBe(false);
    expect(authenticator.authenticate({ authorization: 'Bearer sk-gw-good' })).toMatchObject({ keyId: 'k1', boundUserPath: '/team/a' });
    const forbidden = thrown(GatewayError, () => authenticator.authenticateAdmin({ authorization: 'Bearer sk-gw-good' }));
    expect(forbidden.status).toBe(403);
    expect(forbidden.type).toBe('permission_error');
  });
});

describe('admin without a master key', () => {
  const keys: ApiKeyAuthenticator = {
    hasKeys: () => true,
    authenticate: (token) => (token === 'sk-gw-good' ? { kind: 'api_key', keyId: 'k1', boundUserPath: null } : null),
  };
  const local = { host: '127.0.0.1:8080' };

  it('is closed once a managed key exists: no credential or an invalid one 401, a managed key 403', () => {
    const authenticator = new Authenticator(null, keys);
    expect(thrown(GatewayError, () => authenticator.authenticateAdmin(local, 'POST')).status).toBe(401);
    expect(thrown(GatewayError, () => authenticator.authenticateAdmin({ ...local, authorization: 'Bearer sk-gw-revoked' })).status).toBe(
      401,
    );
    expect(thrown(GatewayError, () => authenticator.authenticateAdmin({ ...local, authorization: 'Bearer sk-gw-good' })).status).toBe(403);
  });

  it('is closed with a JWT issuer and no managed key: no credential and a JWT answer 401', () => {
    const jwt = { enabled: true, cached: () => null, verify: async () => Promise.reject(new Error('unused')) } as unknown as JwtVerifier;
    const authenticator = new Authenticator(null, null, jwt);
    expect(authenticator.openMode).toBe(false);
    expect(authenticator.describeAccess().message).toMatch(/JWT issuers/);
    expect(thrown(GatewayError, () => authenticator.authenticateAdmin(local, 'POST')).code).toBe('missing_credentials');
    expect(thrown(GatewayError, () => authenticator.authenticateAdmin({ ...local, authorization: 'Bearer aaa.bbb.ccc' })).status).toBe(401);
  });

  it('closes when the first managed key is created', () => {
    let created = false;
    const later: ApiKeyAuthenticator = { hasKeys: () => created, authenticate: () => null };
    const authenticator = new Authenticator(null, later);
    expect(authenticator.authenticateAdmin(local, 'POST').kind).toBe('open');
    created = true;
    expect(thrown(GatewayError, () => authenticator.authenticateAdmin(local, 'POST')).status).toBe(401);
    expect(authenticator.describeAccess().open).toBe(false);
  });
});

describe('scoped admin roles', () => {
  const roles = { 'sk-gw-admin': 'admin', 'sk-gw-viewer': 'viewer', 'sk-gw-user': 'user' } as const;
  const keys: ApiKeyAuthenticator = {
    hasKeys: () => true,
    authenticate: (token) => {
      const role = roles[token as keyof typeof roles];
      return role === undefined ? null : { kind: 'api_key', keyId: token, boundUserPath: null, role };
    },
  };

  it('without a master key only admin-role keys pass, viewers included in the refusal', () => {
    const authenticator = new Authenticator(null, keys);
    expect(authenticator.authenticateAdmin({ authorization: 'Bearer sk-gw-admin' }, 'DELETE').keyId).toBe('sk-gw-admin');
    for (const token of ['sk-gw-viewer', 'sk-gw-user']) {
      const error = thrown(GatewayError, () => authenticator.authenticateAdmin({ authorization: `Bearer ${token}` }, 'GET'));
      expect([error.status, error.code]).toEqual([403, 'admin_required']);
    }
  });

  it.each([{ masterKey: 'secret-master' }])(
    'admin may do anything, viewer only GET/HEAD, user nothing (master key $masterKey)',
    ({ masterKey }) => {
      const authenticator = new Authenticator(masterKey, keys);
      const as = (token: string, method: string) => () => authenticator.authenticateAdmin({ authorization: `Bearer ${token}` }, method);
      expect(as('sk-gw-admin', 'DELETE')().keyId).toBe('sk-gw-admin');
      expect(as('sk-gw-viewer', 'GET')().keyId).toBe('sk-gw-viewer');
      expect(as('sk-gw-viewer', 'HEAD')().keyId).toBe('sk-gw-viewer');
      for (const method of ['PUT', 'POST', 'PATCH', 'DELETE']) expect(thrown(GatewayError, as('sk-gw-viewer', method)).status).toBe(403);
      expect(thrown(GatewayError, as('sk-gw-user', 'GET')).code).toBe('admin_required');
    },
  );
});

describe('open mode and browsers', () => {
  const open = new Authenticator(null);

  it('refuses a request from another web origin, on model and admin routes', () => {
    const headers = { host: '127.0.0.1:8080', origin: 'https://evil.example' };
    for (const check of [() => open.authenticate(headers), () => open.authenticateAdmin(headers)]) {
      const error = thrown(GatewayError, check);
      expect([error.status, error.code]).toEqual([403, 'cross_origin_refused']);
    }
    expect(() => open.authenticate({ host: '127.0.0.1:8080', origin: 'null' })).toThrow(GatewayError);
  });

  it('lets clients without Origin and the gateway own pages through', () => {
    expect(open.authenticate({ host: '127.0.0.1:8080' }).kind).toBe('open');
    expect(open.authenticate({ host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' }).kind).toBe('open');
    expect(open.authenticateAdmin({ host: 'LOCALHOST:8080', origin: 'http://localhost:8080' }).kind).toBe('open');
  });

  it('serves only a loopback Host (DNS rebinding), on model and admin routes', () => {
    for (const host of [
      'rebind.attacker.test',
      'rebind.attacker.test:8080',
      '10.0.0.5:8080',
      '127.0.0.1.attacker.test',
      'localhost.attacker.test',
      '[::2]:80',
    ]) {
      const headers = { host, origin: `http://${host}` };
      for (const check of [() => open.authenticate(headers), () => open.authenticateAdmin(headers, 'POST')]) {
        const error = thrown(GatewayError, check);
        expect([error.status, error.code], host).toEqual([403, 'host_not_allowed']);
      }
    }
    expect(thrown(GatewayError, () => open.authenticate({})).code).toBe('host_not_allowed');
    for (const host of ['localhost', 'localhost:8080', 'app.localhost:1', '127.0.0.1', '127.8.9.10:80', '[::1]:8080', '[::1]']) {
      expect(open.authenticate({ host }).kind, host).toBe('open');
    }
  });

  it('leaves Origin alone once credentials are configured', () => {
    const secured = new Authenticator('master-key');
    expect(secured.authenticate({ authorization: 'Bearer master-key', origin: 'https://app.example' }).kind).toBe('master');
  });
});
