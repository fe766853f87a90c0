import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import type { JwtSettings } from '../auth-settings.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { rejected } from '../../testing/thrown.ts';
import { Authenticator } from '../authenticator.ts';
import { JwtVerifier, looksLikeJwt } from './jwt-verifier.ts';

const issuer = 'https://idp.example.test/';

async function fixture(now: () => number) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const settings: JwtSettings = {
    issuers: [
      {
        issuer,
        jwksUrl: null,
        keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }],
        audiences: ['gw'],
        algorithms: ['ES256'],
        clockSkewSeconds: 0,
        userPath: '/teams/{claims.team}/{claims.sub}',
        allowedModelsClaim: 'models',
        allowedEndpointsClaim: null,
      },
    ],
    cacheMaxEntries: 2,
    jwksCooldownMs: 1000,
    jwksMaxAgeMs: 60_000,
  };
  const sign = (payload: Record<string, unknown>) =>
    new SignJWT({ iss: issuer, aud: 'gw', sub: 'ann', team: 'red', exp: Math.floor(now() / 1000) + 60, ...payload })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(privateKey);
  return { verifier: new JwtVerifier(settings, { warn: () => undefined }, now), sign };
}

describe('JwtVerifier', () => {
  it('builds the principal: subject, bound user path, allowed models from the claim', async () => {
    const { verifier, sign } = await fixture(Date.now);
    const principal = await verifier.verify(await sign({ models: 'openai/gpt-4o smart' }));
    expect(principal).toMatchObject({
      kind: 'jwt',
      subject: 'ann',
      boundUserPath: '/teams/red/ann',
      allowedModels: ['openai/gpt-4o', 'smart'],
    });
  });

  it('a token without the allowed-models claim may call no model', async () => {
    const { verifier, sign } = await fixture(Date.now);
    expect((await verifier.verify(await sign({}))).allowedModels).toEqual([]);
  });

  it('a claim holding "/" cannot climb into another user path', async () => {
    const { verifier, sign } = await fixture(Date.now);
    const error = await rejected(GatewayError, verifier.verify(await sign({ team: 'red/../blue' })));
    expect(error).toMatchObject({ status: 401, code: 'invalid_token' });
  });

  it('caches the verdict until exp, bounded (oldest out first)', async () => {
    let clock = Date.now();
    const { verifier, sign } = await fixture(() => clock);
    const [first, second, third] = await Promise.all([sign({ sub: 'a' }), sign({ sub: 'b' }), sign({ sub: 'c' })]);
    expect(verifier.cached(first)).toBeUndefined();
    const principal = await verifier.verify(first);
    expect(verifier.cached(first)).toBe(principal);
    await verifier.verify(second);
    await verifier.verify(third);
    expect(verifier.cached(first)).toBeUndefined();
    expect(verifier.cached(third)?.subject).toBe('c');
    clock += 61_000;
    expect(verifier.cached(third)).toBeUndefined();
  });

  it('recognises JWT-shaped tokens only', () => {
    expect(looksLikeJwt('a.b.c')).toBe(true);
    expect(looksLikeJwt('a.b.')).toBe(true);
    expect(looksLikeJwt('sk-gw-abc')).toBe(false);
    expect(looksLikeJwt('a..c')).toBe(false);
    expect(looksLikeJwt('a.b.c.d')).toBe(false);
  });
});

describe('Authenticator with JWT issuers', () => {
  it('a master key shaped like a JWT is still the master key; a JWT is verified', async () => {
    const { verifier, sign } = await fixture(Date.now);
    const authenticator = new Authenticator('mk.with.dots', null, verifier);
    expect(authenticator.openMode).toBe(false);
    expect(await authenticator.authenticateRequest({ authorization: 'Bearer mk.with.dots' })).toMatchObject({ kind: 'master' });
    const token = await sign({ models: ['a'] });
    expect(await authenticator.authenticateRequest({ authorization: `Bearer ${token}` })).toMatchObject({ kind: 'jwt', subject: 'ann' });
    expect(authenticator.authenticateRequest({ authorization: `Bearer ${token}` })).not.toBeInstanceOf(Promise);
  });
});
