import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors/config-error.ts';
import { loadSettings } from '../config/load.ts';

function load(yaml: string) {
  const cwd = mkdtempSync(join(tmpdir(), 'auth-config-'));
  writeFileSync(join(cwd, 'config.yaml'), yaml);
  return loadSettings({ argv: [], env: {}, cwd });
}

const issuer = (extra: string) => `
auth:
  jwt:
    issuers:
      - issuer: https://idp.example.test/
        jwks_url: https://idp.example.test/jwks
        audiences: [gateway]
${extra}`;

describe('auth.jwt configuration', () => {
  it('defaults: RS256 and ES256, 60 s skew, no template, no claim', () => {
    const { settings } = load(issuer(''));
    expect(settings.auth.jwt.issuers).toEqual([
      {
        issuer: 'https://idp.example.test/',
        jwksUrl: 'https://idp.example.test/jwks',
        keys: null,
        audiences: ['gateway'],
        algorithms: ['RS256', 'ES256'],
        clockSkewSeconds: 60,
        userPath: null,
        allowedModelsClaim: null,
        allowedEndpointsClaim: null,
      },
    ]);
  });

  it('refuses none and HMAC algorithms', () => {
    expect(() => load(issuer('        algorithms: [none]'))).toThrow(ConfigError);
    expect(() => load(issuer('        algorithms: [HS256]'))).toThrow(/never none nor HS/);
  });

  it('needs exactly one of jwks_url and keys', () => {
    expect(() => load(issuer('        keys: [{ kty: EC }]'))).toThrow(/exactly one of jwks_url or keys/);
  });

  it('validates the user-path template', () => {
    expect(() => load(issuer('        user_path: /orgs/{org}'))).toThrow(/\{claims\.NAME\}/);
    expect(load(issuer('        user_path: /orgs/{claims.org}/users/{claims.sub}')).settings.auth.jwt.issuers[0]?.userPath).toBe(
      '/orgs/{claims.org}/users/{claims.sub}',
    );
  });

  it('without issuers JWTs are not accepted', () => {
    expect(load('').settings.auth.jwt.issuers).toEqual([]);
  });
});
