// JWT auth cost on the hot path (issue 19): a token already verified is answered from the
// verdict cache. Measures Authenticator.authenticateRequest on the same cached token (the
// per-request cost: header parse, JWT shape check, cache lookup) and, for contrast, a full
// jose verification of a fresh token. Run: npx tsx bench/jwt-auth.ts
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { JwtVerifier } from '../src/auth/jwt/jwt-verifier.ts';
import { Authenticator } from '../src/auth/authenticator.ts';

const issuer = 'https://idp.example.test/';
const { privateKey, publicKey } = await generateKeyPair('RS256');
const verifier = new JwtVerifier(
  {
    issuers: [
      {
        issuer,
        jwksUrl: null,
        keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }],
        audiences: ['gateway'],
        algorithms: ['RS256'],
        clockSkewSeconds: 60,
        userPath: '/orgs/{claims.org}/users/{claims.sub}',
        allowedModelsClaim: 'models',
        allowedEndpointsClaim: null,
      },
    ],
    cacheMaxEntries: 10_000,
    jwksCooldownMs: 30_000,
    jwksMaxAgeMs: 600_000,
  },
  { warn: () => undefined },
);
const authenticator = new Authenticator('master-key', null, verifier);
const sign = (sub: string) =>
  new SignJWT({ iss: issuer, aud: 'gateway', sub, org: 'acme', models: ['openai/gpt-4o'], exp: Math.floor(Date.now() / 1000) + 3600 })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .sign(privateKey);

// A cache holding many live tokens, as under load; the measured token is one of them.
for (let index = 0; index < 5000; index += 1) await verifier.verify(await sign(`user-${index}`));
const token = await sign('measured');
const headers = { authorization: `Bearer ${token}` };
await authenticator.authenticateRequest(headers);

const cachedRuns = 200_000;
for (let index = 0; index < 20_000; index += 1) authenticator.authenticateRequest(headers);
let started = process.hrtime.bigint();
for (let index = 0; index < cachedRuns; index += 1) {
  const principal = authenticator.authenticateRequest(headers);
  if (principal instanceof Promise) throw new Error('the cached token was verified again');
}
const cachedMicros = Number(process.hrtime.bigint() - started) / 1000 / cachedRuns;
const lookupStarted = process.hrtime.bigint();
for (let index = 0; index < cachedRuns; index += 1) verifier.cached(token);
const lookupMicros = Number(process.hrtime.bigint() - lookupStarted) / 1000 / cachedRuns;

const fresh = await Promise.all(Array.from({ length: 500 }, (_value, index) => sign(`fresh-${index}`)));
started = process.hrtime.bigint();
for (const freshToken of fresh) await verifier.verify(freshToken);
const freshMicros = Number(process.hrtime.bigint() - started) / 1000 / fresh.length;

process.stdout.write(
  `${JSON.stringify({ token_bytes: token.length, cached_us_per_request: Number(cachedMicros.toFixed(3)), verdict_lookup_us: Number(lookupMicros.toFixed(3)), full_verify_us: Number(freshMicros.toFixed(1)), budget_us: 50 })}\n`,
);
if (cachedMicros >= 50) process.exitCode = 1;
